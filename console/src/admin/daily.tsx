import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminDailyTotalsQuery as DailyResult } from '../gql/graphql';
import { ErrorNote } from '../ui';
import { UsageChart } from '../views/usage-chart';
import { AdminDailyTotalsQuery } from './admin-operations';

type Day = DailyResult['adminDailyTotals'][number];

const amount = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 6 });
const utcDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Credits sold (purchases) and spent (charges net of refunds) per UTC day, as a chart and a table. */
export function Daily({ token }: { token: Bearer }) {
  const [from, setFrom] = useState(utcDay(Date.now() - 29 * 86_400_000));
  const [to, setTo] = useState(utcDay(Date.now()));
  const [asked, setAsked] = useState({ from, to });
  const [days, setDays] = useState<Day[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    execute(token, AdminDailyTotalsQuery, { from: asked.from || null, to: asked.to || null }).then(
      (d) => {
        setDays(d.adminDailyTotals);
        setError(null);
      },
      (err) => setError(describeError(err)),
    );
  }, [token, asked]);

  const series = useMemo(
    () =>
      days
        ? [
            { label: 'sold', values: days.map((d) => d.sold) },
            { label: 'spent', values: days.map((d) => d.spent) },
          ]
        : [],
    [days],
  );
  const total = (k: 'sold' | 'spent') => (days ?? []).reduce((s, d) => s + d[k], 0);

  return (
    <div class="stack">
      <form
        class="card filters"
        onSubmit={(e) => {
          e.preventDefault();
          setAsked({ from, to });
        }}
      >
        <div class="field">
          <label for="daily-from">From (UTC day)</label>
          <input id="daily-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="daily-to">To (UTC day)</label>
          <input id="daily-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </div>
        <div class="field filter-reset">
          <button type="submit">Show</button>
        </div>
      </form>
      <ErrorNote message={error} />
      {days && days.length > 0 && (
        <section class="card" aria-labelledby="daily-heading">
          <h2 id="daily-heading">Sold and spent per day</h2>
          <div class="stats">
            <div class="stat">
              <span class="label">Sold</span>
              <span class="value">{amount(total('sold'))}</span>
            </div>
            <div class="stat">
              <span class="label">Spent</span>
              <span class="value">{amount(total('spent'))}</span>
            </div>
          </div>
          <UsageChart
            days={days.map((d) => d.day)}
            series={series}
            summary={`Credits sold and spent per UTC day from ${days[0]!.day} to ${days[days.length - 1]!.day}: ${amount(total('sold'))} sold, ${amount(total('spent'))} spent.`}
          />
          {days.every((d) => d.sold === 0 && d.spent === 0) ? (
            <p>Nothing was sold or spent in these days.</p>
          ) : (
            <table class="statement">
              <caption class="sr-only">Credits sold and spent per UTC day, days with either, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" class="num">
                    Sold
                  </th>
                  <th scope="col" class="num">
                    Spent
                  </th>
                </tr>
              </thead>
              <tbody>
                {days
                  .filter((d) => d.sold !== 0 || d.spent !== 0)
                  .reverse()
                  .map((d) => (
                    <tr key={d.day}>
                      <td>{d.day}</td>
                      <td class="num">{amount(d.sold)}</td>
                      <td class="num">{amount(d.spent)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </div>
  );
}
