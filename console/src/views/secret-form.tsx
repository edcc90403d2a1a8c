/** A form of one secret (an API key, the admin token): a password field, its error under it, one button. */
export function SecretForm(props: {
  id: string;
  label: string;
  value: string;
  error: string | null;
  busy: boolean;
  button: string;
  onInput: (value: string) => void;
  onSubmit: (e: Event) => void;
}) {
  const errorId = `${props.id}-error`;
  return (
    <form onSubmit={props.onSubmit} class="grid">
      <div class="field">
        <label for={props.id}>{props.label}</label>
        <input
          id={props.id}
          type="password"
          autoComplete="off"
          value={props.value}
          aria-invalid={props.error ? true : undefined}
          aria-describedby={props.error ? errorId : undefined}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      </div>
      {props.error && (
        <p class="error" role="alert" id={errorId}>
          {props.error}
        </p>
      )}
      <div class="row">
        <button type="submit" disabled={props.busy}>
          {props.button}
        </button>
      </div>
    </form>
  );
}
