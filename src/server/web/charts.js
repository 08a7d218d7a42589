// Line charts on a canvas, small enough to read: a time axis of the last minutes (or since the
// first point, while there are fewer), a y axis from 0 with a few gridlines, one line per series,
// gaps where a value is missing (null).

const COLORS = ['#2f81f7', '#e16f24', '#1a7f37', '#a371f7', '#cf222e'];

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

export class LineChart {
  // series: [{ name, color? }]; format: a y value as text (axis labels and the legend).
  constructor(container, { title, series, format = (v) => String(v), windowSeconds = 300 }) {
    this.series = series.map((s, i) => ({ ...s, color: s.color || COLORS[i % COLORS.length] }));
    this.format = format;
    this.windowSeconds = windowSeconds;
    this.root = document.createElement('section');
    this.root.className = 'chart';
    const h = document.createElement('h2');
    h.textContent = title;
    this.canvas = document.createElement('canvas');
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', title);
    this.legend = document.createElement('div');
    this.legend.className = 'legend';
    this.root.append(h, this.canvas, this.legend);
    container.append(this.root);
    this.points = [];
    new ResizeObserver(() => this.draw()).observe(this.canvas);
  }

  // points: [{ t (ms since epoch), values: [number|null per series] }]
  update(points) {
    this.points = points;
    const filled = points.filter((p) => p.values.some((v) => v !== null)).length;
    this.root.dataset.points = String(filled);
    this.draw();
    this.drawLegend();
  }

  drawLegend() {
    const last = this.points.length ? this.points[this.points.length - 1].values : [];
    this.legend.replaceChildren(
      ...this.series.map((s, i) => {
        const item = document.createElement('span');
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = s.color;
        const v = last[i];
        item.append(sw, `${s.name}: ${v === null || v === undefined ? '–' : this.format(v)}`);
        return item;
      }),
    );
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (!w || !h) return;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const css = getComputedStyle(document.documentElement);
    const muted = css.getPropertyValue('--muted').trim() || '#888';
    const grid = css.getPropertyValue('--border').trim() || '#ccc';
    const pad = { l: 58, r: 10, t: 8, b: 22 };
    const now = this.points.length ? this.points[this.points.length - 1].t : Date.now();
    const first = this.points.length ? this.points[0].t : now;
    const t0 = Math.min(now - 10000, Math.max(now - this.windowSeconds * 1000, first));
    let max = 0;
    for (const p of this.points) for (const v of p.values) if (v !== null && v > max) max = v;
    const ymax = niceMax(max);
    const x = (t) => pad.l + ((t - t0) / (now - t0)) * (w - pad.l - pad.r);
    const y = (v) => h - pad.b - (v / ymax) * (h - pad.t - pad.b);
    g.font = '11px system-ui, sans-serif';
    g.lineWidth = 1;
    g.strokeStyle = grid;
    g.fillStyle = muted;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; ++i) {
      const v = (ymax * i) / 4;
      g.beginPath();
      g.moveTo(pad.l, y(v));
      g.lineTo(w - pad.r, y(v));
      g.stroke();
      g.fillText(this.format(v), pad.l - 6, y(v));
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const span = (now - t0) / 1000;
    const step = [5, 10, 15, 30, 60, 120, 300].find((s) => span / s <= 6) || 600;
    for (let ago = 0; ago <= span; ago += step) {
      const label = ago === 0 ? 'now' : ago % 60 === 0 ? `-${ago / 60}m` : `-${ago}s`;
      g.fillText(label, x(now - ago * 1000), h - pad.b + 5);
    }
    g.lineWidth = 2;
    this.series.forEach((s, i) => {
      g.strokeStyle = s.color;
      g.beginPath();
      let pen = false;
      for (const p of this.points) {
        const v = p.values[i];
        if (v === null || v === undefined || p.t < t0) {
          pen = false;
          continue;
        }
        if (pen) g.lineTo(x(p.t), y(v));
        else g.moveTo(x(p.t), y(v));
        pen = true;
      }
      g.stroke();
    });
  }
}
