// Reading Prometheus text (the server's /metrics) and turning a window of samples into rates and
// latency percentiles, the way Prometheus' rate() and histogram_quantile() do.

// name -> [{ labels, value }]
export function parseMetrics(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    if (!out.has(m[1])) out.set(m[1], []);
    out.get(m[1]).push({ labels, value: Number(m[3]) });
  }
  return out;
}

// The sum over every series of a metric (one model: one series, or one per label value).
export function total(metrics, name) {
  const rows = metrics.get(name);
  return rows ? rows.reduce((s, r) => s + r.value, 0) : null;
}

// A histogram's cumulative buckets as [[le, count], ...], le ascending (+Inf last).
export function buckets(metrics, name) {
  const rows = metrics.get(`${name}_bucket`) || [];
  const byLe = new Map();
  for (const r of rows) {
    const le = r.labels.le === '+Inf' ? Infinity : Number(r.labels.le);
    byLe.set(le, (byLe.get(le) || 0) + r.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]);
}

// The q-quantile of the observations between two bucket snapshots (null when there were none),
// interpolated linearly inside the bucket that holds it.
export function quantile(q, now, before) {
  const prev = new Map(before || []);
  const counts = now.map(([le, c]) => [le, c - (prev.get(le) || 0)]);
  const n = counts.length ? counts[counts.length - 1][1] : 0;
  if (n <= 0) return null;
  const rank = q * n;
  let lower = 0;
  let below = 0;
  for (const [le, c] of counts) {
    if (c >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(c - below, 1e-12);
    }
    if (le !== Infinity) lower = le;
    below = c;
  }
  return lower;
}
