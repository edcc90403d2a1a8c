import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface UsageSeries {
  label: string;
  values: number[];
}

const COLOURS = ['#2754c5', '#d9480f', '#2b8a3e', '#862e9c', '#c2255c', '#1098ad', '#e67700', '#5c940d', '#495057'];
const DAY_S = 86_400;

/** Credits per day, one line per key or model (uPlot); sized to its container, redrawn on resize. */
export function UsageChart({ days, series, summary }: { days: string[]; series: UsageSeries[]; summary: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const width = () => Math.max(240, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true, range: [xs[0]! - DAY_S / 2, xs[xs.length - 1]! + DAY_S / 2] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [{ space: 60 }, { label: 'credits', size: 56 }],
        series: [
          { label: 'day', value: (_u, v) => (v === null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            points: { show: true, size: 5 },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: 4 })),
          })),
        ],
      },
      [xs, ...series.map((s) => s.values)],
      el,
    );
    const resize = () => plot.setSize({ width: width(), height: 240 });
    const observer = new ResizeObserver(resize);
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [days, series]);
  return <div class="chart" ref={box} role="img" aria-label={summary} />;
}
