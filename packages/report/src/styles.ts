/** The report's only stylesheet, inlined into the page: system fonts, no external resources. */
export const REPORT_CSS = `
:root { color-scheme: light; --ink: #1d1d1f; --muted: #5f6368; --rule: #e3e3e3; --card: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1200px; margin: 0 auto; padding: 20px 24px 48px; }
header h1 { font-size: 22px; margin: 0 0 2px; }
header .sub { color: var(--muted); margin: 0 0 10px; word-break: break-all; }
nav { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 8px 0; border-top: 1px solid var(--rule); border-bottom: 1px solid var(--rule); }
nav a { color: #2b5ea7; text-decoration: none; }
nav a:hover { text-decoration: underline; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
.lead { color: var(--muted); margin: 0 0 10px; max-width: 900px; }
table.summary { border-collapse: collapse; margin: 10px 0; }
table.summary th { text-align: left; font-weight: 500; color: var(--muted); padding: 3px 18px 3px 0; }
table.summary td { padding: 3px 0; font-variant-numeric: tabular-nums; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 14px; }
figure.chart { margin: 0; padding: 10px 12px; border: 1px solid var(--rule); border-radius: 6px; background: #fff; min-width: 0; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figure.chart .note { color: var(--muted); font-size: 12.5px; margin: 6px 0 0; }
ul.flat { margin: 10px 0 0; padding: 8px 12px 8px 28px; background: var(--card); border-radius: 4px; color: var(--muted); font-size: 13px; }
ul.flat li { margin: 2px 0; }
ul.flat .flat-title { color: var(--ink); font-weight: 500; }
p.nodata { color: var(--muted); font-style: italic; margin: 8px 0; padding: 18px; background: var(--card); border-radius: 4px; text-align: center; }
details.data { margin-top: 6px; font-size: 12.5px; }
details.data summary { cursor: pointer; color: var(--muted); }
details.data table { border-collapse: collapse; margin-top: 4px; font-variant-numeric: tabular-nums; }
details.data th, details.data td { padding: 2px 10px 2px 0; text-align: right; border-bottom: 1px solid #f0f0f0; }
details.data th { font-weight: 500; color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; margin: 8px 0 12px; font-size: 12.5px; color: var(--muted); }
.legend-bar { display: inline-block; width: 220px; height: 12px; border: 1px solid #ccc; border-radius: 2px; }
.legend-label { font-variant-numeric: tabular-nums; color: var(--ink); }
.legend-note { margin-right: 12px; }
.legend-key { padding: 0 4px; color: var(--ink); }
.samples { display: grid; grid-template-columns: 1fr; gap: 12px; }
article.sample { border: 1px solid var(--rule); border-radius: 6px; padding: 10px 12px; background: var(--card); }
.sample-head { margin-bottom: 4px; }
.ckpt-row { display: grid; grid-template-columns: 5.5em 1fr; align-items: start; gap: 6px; margin: 2px 0; }
.sample-head .meta { color: var(--muted); font-size: 12.5px; }
.badge { display: inline-block; font-size: 11.5px; font-weight: 600; padding: 1px 7px; border-radius: 9px; color: #fff; }
.badge.ok { background: #1b7f5a; }
.badge.bad { background: #c4501b; }
details.prompt { font-size: 12.5px; margin: 2px 0 6px; }
details.prompt summary { cursor: pointer; color: var(--muted); }
details.prompt pre, details.config pre { white-space: pre-wrap; word-break: break-word; background: #fff; border: 1px solid var(--rule); border-radius: 4px; padding: 8px; margin: 4px 0; max-height: 420px; overflow: auto; }
.completion { font: 13px/1.9 ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-word; background: #fff; border: 1px solid var(--rule); border-radius: 4px; padding: 8px; }
.tok { border-radius: 2px; }
.tok.light { color: #fff; }
.answer { border: 1.5px solid #1d1d1f; padding: 1px 0; border-radius: 3px; -webkit-box-decoration-break: clone; box-decoration-break: clone; }
.delim { text-decoration: underline dotted #1d1d1f 2px; text-underline-offset: 3px; }
details.config summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--rule); padding-top: 8px; }
`;
