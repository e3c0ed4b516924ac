"""Tiny inline-SVG charts for report.html: grouped bars and lines, no JavaScript, no external files.

Hand-written because the report must open offline as one file; the charting libraries that emit
SVG pull in scripts or fonts from elsewhere. Each function returns one <svg> element as text.
"""
import html
import math

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]
CEILING_COLOUR = "#555"


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def short(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.1f}M"
    if v >= 999.5:  # what would round to 1,000 is 1.0k, not 1e+03
        return f"{v / 1e3:.0f}k" if v >= 9999.5 else f"{v / 1e3:.1f}k"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def _legend_rows(names: list[str], extra, x: int, max_x: int | None) -> list[list[tuple[str, int]]]:
    items = [(name, 24 + 7 * len(name)) for name in names] + [(label, 30 + 7 * len(label)) for label, _ in extra]
    rows, dx = [[]], x
    for label, w in items:
        if max_x is not None and dx + w > max_x and rows[-1]:
            rows.append([])
            dx = x
        rows[-1].append((label, w))
        dx += w
    return rows


def legend_height(names: list[str], x: int, max_x: int, extra: list = ()) -> int:
    """Pixels the legend needs above its last row's baseline (0 for one row)."""
    return 16 * (len(_legend_rows(names, extra, x, max_x)) - 1)


def legend(names: list[str], colours: dict, x: int, y: int, extra: list = (), max_x: int | None = None) -> str:
    """As many rows as it takes to stay left of max_x, the last one at y (the others above it)."""
    rows = _legend_rows(names, extra, x, max_x)
    styles = dict(extra)
    out = []
    for i, row in enumerate(rows):
        row_y, dx = y - 16 * (len(rows) - 1 - i), x
        for label, w in row:
            if label in styles and label not in colours:
                out.append(f'<line x1="{dx}" y1="{row_y - 4}" x2="{dx + 18}" y2="{row_y - 4}" {styles[label]}/>'
                           f'<text x="{dx + 22}" y="{row_y}" font-size="12">{esc(label)}</text>')
            else:
                out.append(f'<rect x="{dx}" y="{row_y - 9}" width="10" height="10" fill="{colours[label]}"/>'
                           f'<text x="{dx + 14}" y="{row_y}" font-size="12">{esc(label)}</text>')
            dx += w
    return "".join(out)


def bar_chart(title: str, groups: list[str], series: list[str], values: dict, unit: str, colours: dict,
              markers: dict | None = None, log: bool = False, width: int = 1300, height: int = 320) -> str:
    """values[(group, series)] -> number or None; markers[group] -> a ceiling drawn as a dashed line."""
    left, right, top, bottom = 70, 20, 40, 60
    pw, ph = width - left - right, height - top - bottom
    nums = [v for v in values.values() if v] + [v for v in (markers or {}).values() if v]
    if not nums:
        return ""
    if log:
        lo = 10 ** math.floor(math.log10(min(nums) / 2))  # at least a visible stub for the smallest bar
        hi = 10 ** math.ceil(math.log10(max(nums)))

        def y(v):
            return top + ph - ph * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        ticks = [lo * 10 ** i for i in range(int(round(math.log10(hi / lo))) + 1)]
    else:
        hi = nice_max(max(nums))

        def y(v):
            return top + ph - ph * v / hi
        ticks = [hi * i / 5 for i in range(6)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif"><title>{esc(title)}</title>',
           f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>']
    for t in ticks:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y(t) + 4:.1f}" font-size="11" text-anchor="end">{short(t)}</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" font-size="12" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">{esc(unit)}</text>')
    gw = pw / max(1, len(groups))
    bw = min(40, gw * 0.8 / max(1, len(series)))
    for gi, g in enumerate(groups):
        gx = left + gi * gw + (gw - bw * len(series)) / 2
        for si, s in enumerate(series):
            v = values.get((g, s))
            if not v:
                continue
            x0, y0 = gx + si * bw, y(v)
            out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{bw - 2:.1f}" height="{top + ph - y0:.1f}" '
                       f'fill="{colours[s]}"><title>{esc(s)} {esc(g)}: {v:,.1f} {esc(unit)}</title></rect>')
            if bw >= 26:
                out.append(f'<text x="{x0 + bw / 2 - 1:.1f}" y="{y0 - 3:.1f}" font-size="10" text-anchor="middle">{short(v)}</text>')
        if markers and markers.get(g):
            my = y(markers[g])
            out.append(f'<line x1="{left + gi * gw + 4:.1f}" x2="{left + (gi + 1) * gw - 4:.1f}" y1="{my:.1f}" y2="{my:.1f}" '
                       f'stroke="{CEILING_COLOUR}" stroke-width="2" stroke-dasharray="6 3"><title>ceiling {markers[g]:,.0f}</title></line>')
        out.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{top + ph + 18}" font-size="13" text-anchor="middle">{esc(g)}</text>')
    extra = [("ceiling", f'stroke="{CEILING_COLOUR}" stroke-width="2" stroke-dasharray="6 3"')] if markers else []
    out.append(legend(series, colours, left, height - 12, extra, max_x=width))
    out.append("</svg>")
    return "".join(out)


def line_chart(title: str, lines: dict, colours: dict, unit: str, xlabel: str, knees: dict | None = None,
               ceiling: list | None = None, width: int = 640, height: int = 320, xlog: bool = True) -> str:
    """lines[name] -> [(x, y)], x on a log2 axis (concurrency); knees[name] -> x to circle; ceiling -> [(x, y)]."""
    left, right, top, bottom = 70, 20, 40, 84  # room for a two-row legend under the axis label
    pw, ph = width - left - right, height - top - bottom
    xs = sorted({x for pts in lines.values() for x, _ in pts} | {x for x, _ in (ceiling or [])})
    ys = [v for pts in lines.values() for _, v in pts if v] + [v for _, v in (ceiling or []) if v]
    if not xs or not ys:
        return ""
    hi = nice_max(max(ys))
    scale = math.log2 if xlog else (lambda v: v)
    lx0, lx1 = scale(xs[0]), scale(xs[-1])

    inset = 14  # the first and last level stay clear of the axis labels (a knee's circle has radius 8)

    def X(x):
        return left + inset + ((pw - 2 * inset) * (scale(x) - lx0) / (lx1 - lx0) if lx1 > lx0 else pw / 2 - inset)

    def Y(v):
        return top + ph - ph * v / hi
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif"><title>{esc(title)}</title>',
           f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>']
    for i in range(6):
        t = hi * i / 5
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" font-size="11" text-anchor="end">{short(t)}</text>')
    step = max(1, len(xs) // 12)
    for x in xs[::step]:
        out.append(f'<text x="{X(x):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{x}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" font-size="12" text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" font-size="12" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">{esc(unit)}</text>')
    if ceiling:
        pts = " ".join(f"{X(x):.1f},{Y(min(v, hi)):.1f}" for x, v in ceiling if v)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{CEILING_COLOUR}" stroke-width="2" stroke-dasharray="6 3"/>')
    for name, pts in lines.items():
        pts = [(x, v) for x, v in pts if v is not None]
        if not pts:
            continue
        out.append(f'<polyline points="{" ".join(f"{X(x):.1f},{Y(v):.1f}" for x, v in pts)}" fill="none" '
                   f'stroke="{colours[name]}" stroke-width="2.5"/>')
        for x, v in pts:
            out.append(f'<circle cx="{X(x):.1f}" cy="{Y(v):.1f}" r="3" fill="{colours[name]}">'
                       f'<title>{esc(name)} {x} conns: {v:,.0f}</title></circle>')
        k = (knees or {}).get(name)
        kv = dict(pts).get(k)
        if kv:
            out.append(f'<circle cx="{X(k):.1f}" cy="{Y(kv):.1f}" r="8" fill="none" stroke="{colours[name]}" '
                       f'stroke-width="2"><title>knee of {esc(name)}: {k} conns</title></circle>')
    extra = [("ceiling", f'stroke="{CEILING_COLOUR}" stroke-width="2" stroke-dasharray="6 3"')] if ceiling else []
    if knees:
        extra.append(("◯ knee", 'stroke="none"'))
    out.append(legend(list(lines), colours, left, height - 10, extra, max_x=width))
    out.append("</svg>")
    return "".join(out)


PERCENTILE_TICKS = (50, 90, 99, 99.9, 99.99)


def _nines(p: float) -> float:
    """x of percentile p on an HdrHistogram-style axis: log10 of 1 / (1 - p), so 90, 99, 99.9 are evenly spaced."""
    return math.log10(100 / (100 - p))


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """Decades from lo to hi, and 2x, 5x between them when few decades show."""
    decades = [lo * 10 ** i for i in range(int(round(math.log10(hi / lo))) + 1)]
    minor = [d * m for d in decades[:-1] for m in (2, 5)] if len(decades) <= 4 else []
    return decades, minor


def percentile_chart(title: str, lines: dict, colours: dict, dashed: set = frozenset(), width: int = 640,
                     height: int = 340) -> str:
    """Latency against percentile, both on log scales: lines[label] -> [(percentile, ms)] with
    percentiles from 50 to 99.99; colours[label]; labels in `dashed` are drawn dashed."""
    left, right, top = 70, 20, 40
    height += legend_height(list(lines), left, width)
    bottom = 68 + legend_height(list(lines), left, width)
    pw, ph = width - left - right, height - top - bottom
    pts_all = [(p, v) for pts in lines.values() for p, v in pts if v and v > 0 and 50 <= p < 100]
    if not pts_all:
        return ""
    lo = 10 ** math.floor(math.log10(min(v for _, v in pts_all)))
    hi = 10 ** math.ceil(math.log10(max(v for _, v in pts_all)))
    if hi <= lo:
        hi = lo * 10
    x0, x1 = _nines(PERCENTILE_TICKS[0]), _nines(PERCENTILE_TICKS[-1])

    def X(p):
        return left + pw * (_nines(p) - x0) / (x1 - x0)

    def Y(v):
        return top + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif"><title>{esc(title)}</title>',
           f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>']
    decades, minor = log_ticks(lo, hi)
    for t in minor:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" stroke="#eee"/>')
        if len(decades) <= 3:  # one or two decades: too few labels without the 2x and 5x
            out.append(f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" font-size="10" fill="#777" text-anchor="end">{t:,g}</text>')
    for t in decades:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" stroke="#ccc"/>'
                   f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" font-size="11" text-anchor="end">{t:,g}</text>')
    for p in PERCENTILE_TICKS:
        out.append(f'<line x1="{X(p):.1f}" x2="{X(p):.1f}" y1="{top}" y2="{top + ph}" stroke="#e4e4e4"/>'
                   f'<text x="{X(p):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">p{p:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" font-size="12" text-anchor="middle">'
               f'percentile (log scale of 1 / (1 − p))</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" font-size="12" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">latency, ms (log scale)</text>')
    for label, pts in lines.items():
        pts = sorted((p, v) for p, v in pts if v and v > 0 and 50 <= p < 100)
        if not pts:
            continue
        dash = ' stroke-dasharray="6 4"' if label in dashed else ""
        out.append(f'<polyline points="{" ".join(f"{X(p):.1f},{Y(v):.1f}" for p, v in pts)}" fill="none" '
                   f'stroke="{colours[label]}" stroke-width="2.5"{dash}/>')
        for p, v in pts:
            out.append(f'<circle cx="{X(p):.1f}" cy="{Y(v):.1f}" r="3" fill="{colours[label]}">'
                       f'<title>{esc(label)} p{p:g}: {v:,.2f} ms</title></circle>')
    out.append(legend(list(lines), colours, left, height - 10, max_x=width))
    out.append("</svg>")
    return "".join(out)


TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200)


def time_label(seconds: float, step: float) -> str:
    if step < 60:
        return f"{int(seconds // 60)}:{int(seconds % 60):02d}"
    return f"{seconds / 60:g} min"


def time_chart(title: str, lines: dict, colours: dict, unit: str, log: bool = False, spans: list = (),
               hline: tuple | None = None, dots: set = frozenset(), dashed: set = frozenset(), x_max: float | None = None,
               width: int = 1300, height: int = 300) -> str:
    """A series over the time of a soak: lines[name] -> [(seconds, value or None)] (None breaks the
    line); names in `dots` are drawn as points only (events such as GC pauses), in `dashed` dashed.
    spans: [(from_s, to_s, why)] shaded behind (flagged windows); hline: (value, label) drawn dashed
    across (a threshold). y on a log scale with `log` (values <= 0 left out)."""
    left, right, top = 70, 20, 40
    bottom = 60 + legend_height(list(lines), left, width)
    height += legend_height(list(lines), left, width)
    pw, ph = width - left - right, height - top - bottom
    ys = [v for pts in lines.values() for _, v in pts if v is not None and (v > 0 or not log)]
    if hline and hline[0] and (hline[0] > 0 or not log):
        ys.append(hline[0])
    xs = [x for pts in lines.values() for x, _ in pts]
    if not ys or not xs:
        return ""
    x1 = x_max or max(xs) or 1.0
    if log:
        lo = 10 ** math.floor(math.log10(min(ys)))
        hi = 10 ** math.ceil(math.log10(max(ys)))
        hi = hi if hi > lo else lo * 10

        def Y(v):
            return top + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        decades, minor = log_ticks(lo, hi)
        ticks = decades + (minor if len(decades) <= 3 else [])
    else:
        hi = nice_max(max(ys))

        def Y(v):
            return top + ph - ph * v / hi
        ticks = [hi * i / 5 for i in range(6)]

    def X(x):
        return left + pw * x / x1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif"><title>{esc(title)}</title>',
           f'<text x="{left}" y="20" font-size="15" font-weight="bold">{esc(title)}</text>']
    for a, b, why in spans:
        out.append(f'<rect x="{X(a):.1f}" y="{top}" width="{max(1.0, X(b) - X(a)):.1f}" height="{ph}" fill="#fde0dc">'
                   f'<title>{esc(why)}</title></rect>')
    for t in ticks:
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{Y(t):.1f}" y2="{Y(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{Y(t) + 4:.1f}" font-size="11" text-anchor="end">{short(t)}</text>')
    step = next((s for s in TIME_STEPS if x1 / s <= 12), TIME_STEPS[-1])
    for i in range(int(x1 // step) + 1):
        x = i * step
        out.append(f'<line x1="{X(x):.1f}" x2="{X(x):.1f}" y1="{top}" y2="{top + ph}" stroke="#f0f0f0"/>'
                   f'<text x="{X(x):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{time_label(x, step)}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" font-size="12" text-anchor="middle">time into the soak</text>')
    out.append(f'<text x="14" y="{top + ph / 2}" font-size="12" transform="rotate(-90 14 {top + ph / 2})" '
               f'text-anchor="middle">{esc(unit)}</text>')
    if hline and hline[0] and (hline[0] > 0 or not log):
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{Y(hline[0]):.1f}" y2="{Y(hline[0]):.1f}" '
                   f'stroke="{CEILING_COLOUR}" stroke-width="1.5" stroke-dasharray="6 3"><title>{esc(hline[1])}</title></line>'
                   f'<text x="{left + pw - 4}" y="{Y(hline[0]) - 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="{CEILING_COLOUR}">{esc(hline[1])}</text>')
    for name, pts in lines.items():
        usable = [(x, v) for x, v in pts if v is not None and (v > 0 or not log)]
        if name in dots:
            out.extend(f'<circle cx="{X(x):.1f}" cy="{Y(v):.1f}" r="2.5" fill="{colours[name]}">'
                       f'<title>{esc(name)} at {time_label(x, 1)}: {v:,.2f} {esc(unit)}</title></circle>' for x, v in usable)
            continue
        dash = ' stroke-dasharray="6 4"' if name in dashed else ""
        segment: list = []
        for x, v in list(pts) + [(None, None)]:
            if x is not None and v is not None and (v > 0 or not log):
                segment.append(f"{X(x):.1f},{Y(v):.1f}")
                continue
            if len(segment) > 1:
                out.append(f'<polyline points="{" ".join(segment)}" fill="none" stroke="{colours[name]}" '
                           f'stroke-width="1.6"{dash}><title>{esc(name)}</title></polyline>')
            elif segment:
                out.append(f'<circle cx="{segment[0].split(",")[0]}" cy="{segment[0].split(",")[1]}" r="2" '
                           f'fill="{colours[name]}"/>')
            segment = []
    out.append(legend(list(lines), colours, left, height - 10, max_x=width))
    out.append("</svg>")
    return "".join(out)
