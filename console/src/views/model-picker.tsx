import type { ModelRecord } from './models';

/** A labelled multiple choice of catalog models. */
export function ModelPicker(props: { id: string; label: string; models: ModelRecord[]; value: string[]; onChange: (ids: string[]) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select
        id={props.id}
        multiple
        size={5}
        aria-describedby={`${props.id}-hint`}
        onChange={(e) => props.onChange([...e.currentTarget.selectedOptions].map((o) => o.value))}
      >
        {props.models.map((m) => (
          <option value={m.id} selected={props.value.includes(m.id)}>
            {m.id}
          </option>
        ))}
      </select>
      {/* A multiple select takes one option per click: more, or none, needs Ctrl (⌘ on a Mac), which nothing else says. */}
      <p class="hint" id={`${props.id}-hint`}>
        Ctrl-click (⌘-click on a Mac) to choose several or to clear one.
      </p>
    </div>
  );
}
