/** A hash that names no view (a mistyped or outdated link): said plainly, with the way back. */
export function NotFound({ hash, home }: { hash: string; home: string }) {
  return (
    <section class="card" aria-label="Not found">
      <p>
        There is no view at <span class="mono">{hash}</span>.
      </p>
      <p>
        <a href="#/">Go to {home}</a>
      </p>
    </section>
  );
}
