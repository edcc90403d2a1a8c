import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A destructive action in two steps: the button is replaced by "Confirm …" (focused, so the
 * keyboard stays where the user is) and Cancel; Escape cancels too. Cancelling, or a confirmed
 * action that leaves focus nowhere (it failed, and its message is shown), brings focus back to the
 * first button. A confirmed action that moves focus itself (a secret shown) keeps it there.
 */
export function ConfirmButton(props: {
  label: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onCancel?: () => void;
  secondary?: boolean;
  /** The second step's way back, where "Cancel" would mean the action itself (cancelling a job). */
  dismissLabel?: string;
}) {
  const [confirming, setConfirming] = useState(false);
  // Not `disabled` while the action runs: disabling the focused button would drop focus to <body>.
  const busy = useRef(false);
  const start = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef(false);
  // Whether the confirm step has been shown: only its end brings focus back. On the first render
  // focus is often on <body> (a view just opened): taking it then put the first key's Revoke
  // under the keyboard, and two presses of Enter revoked a key nobody had chosen.
  const opened = useRef(false);

  useEffect(() => {
    if (confirming) {
      opened.current = true;
      confirm.current?.focus();
    } else if (opened.current && (returnFocus.current || document.activeElement === document.body)) start.current?.focus();
    returnFocus.current = false;
  }, [confirming]);

  const cancel = () => {
    returnFocus.current = true;
    setConfirming(false);
    props.onCancel?.();
  };
  const go = async () => {
    if (busy.current) return;
    busy.current = true;
    try {
      await props.onConfirm();
    } finally {
      busy.current = false;
      setConfirming(false);
    }
  };

  if (!confirming) {
    return (
      <button type="button" class={props.secondary ? 'secondary' : 'danger'} ref={start} onClick={() => setConfirming(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="row" onKeyDown={(e) => e.key === 'Escape' && cancel()}>
      <button type="button" class="danger" ref={confirm} onClick={go}>
        {props.confirmLabel}
      </button>
      <button type="button" class="secondary" onClick={cancel}>
        {props.dismissLabel ?? 'Cancel'}
      </button>
    </span>
  );
}
