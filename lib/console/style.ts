/**
 * The console's one stylesheet (served at /console/assets/console.css by every service): plain,
 * readable, with a visible keyboard focus, usable at 390 px wide. Colours pass WCAG AA contrast on
 * their backgrounds; a status is always written out, never told by colour alone.
 */
export const CONSOLE_CSS = `
:root { --ink: #1b1f24; --muted: #4f5864; --line: #d0d6de; --bg: #f6f8fa; --accent: #0b5cad; --accent-ink: #fff;
  --warn: #8a1c1c; --warn-bg: #fdecea; --ok: #155724; --ok-bg: #e6f4ea; --info: #0b4f94; --info-bg: #eef4fb; --pending: #6b4a00; --pending-bg: #fff4d6; }
* { box-sizing: border-box; }
html { font-family: "Helvetica Neue", Arial, "Liberation Sans", sans-serif; font-size: 15px; color: var(--ink); line-height: 1.45; background: #fff; }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible, [tabindex]:focus-visible {
  outline: 3px solid #f0a500; outline-offset: 2px; }
.skip { position: absolute; left: -10000px; top: 0; background: var(--ink); color: #fff; padding: 0.5rem 1rem; z-index: 10; }
.skip:focus { left: 0.5rem; top: 0.5rem; }
header.top { background: var(--ink); color: #fff; padding: 0.5rem 1.25rem; display: flex; flex-wrap: wrap; gap: 0.4rem 1.5rem; align-items: center; }
header.top a { color: #fff; }
header.top .brand { font-weight: 700; font-size: 1.1rem; text-decoration: none; margin-right: auto; }
header.top .who { display: flex; flex-wrap: wrap; gap: 0.3rem 0.9rem; align-items: center; font-size: 0.9rem; }
header.top form { display: inline; margin: 0; }
header.top button.link { background: none; border: 0; padding: 0; color: #fff; text-decoration: underline; font: inherit; cursor: pointer; }
nav.sections { background: var(--bg); border-bottom: 1px solid var(--line); padding: 0 1.25rem; }
nav.sections ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0 0.2rem; }
nav.sections a { display: inline-block; padding: 0.55rem 0.7rem; text-decoration: none; color: var(--ink); border-bottom: 3px solid transparent; }
nav.sections a[aria-current="page"] { border-bottom-color: var(--accent); font-weight: 600; color: var(--accent); }
main { flex: 1; width: 100%; max-width: 72rem; margin: 0 auto; padding: 1.25rem 1.25rem 2.5rem; }
footer.bottom { border-top: 1px solid var(--line); padding: 0.6rem 1.25rem; font-size: 0.85rem; color: var(--muted); background: var(--bg); }
h1 { font-size: 1.5rem; margin: 0.2rem 0 0.8rem; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.3rem; }
p { margin: 0.4rem 0; }
.muted { color: var(--muted); }
.crumbs { font-size: 0.9rem; color: var(--muted); margin-bottom: 0.3rem; }
.table-wrap { overflow-x: auto; margin: 0.4rem 0 0.9rem; position: relative; }
table { border-collapse: collapse; width: 100%; font-size: 0.93rem; }
caption { text-align: left; font-weight: 600; padding: 0.3rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.5rem; border-bottom: 1px solid var(--line); }
thead th { color: var(--muted); font-weight: 600; white-space: nowrap; background: var(--bg); }
table.fields th { width: 12rem; color: var(--muted); font-weight: 600; }
.log { max-height: 36rem; overflow: auto; }
.log code.line { white-space: pre-wrap; word-break: break-word; }
.log tr.stderr td { color: var(--warn); }
.log td:first-child { white-space: nowrap; }
code, .mono { font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; font-size: 0.88rem; word-break: break-all; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.82rem; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.badge.ok { color: var(--ok); background: var(--ok-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.info { color: var(--info); background: var(--info-bg); }
.badge.pending { color: var(--pending); background: var(--pending-bg); }
.badge.neutral { color: var(--muted); background: var(--bg); }
.notice { padding: 0.6rem 0.9rem; border-radius: 4px; margin: 0 0 1rem; font-weight: 600; border: 1px solid; }
.notice.ok { background: var(--ok-bg); color: var(--ok); }
.notice.warn { background: var(--warn-bg); color: var(--warn); }
.notice.info { background: var(--info-bg); color: var(--info); }
.secret { border: 2px solid var(--warn); border-radius: 6px; padding: 0.8rem 1rem; margin: 1rem 0; background: #fffafa; }
.secret .value { display: block; background: var(--bg); border: 1px solid var(--line); padding: 0.5rem; margin: 0.4rem 0; }
form.stack { display: grid; gap: 0.7rem; max-width: 34rem; margin: 0.6rem 0 1rem; }
form.inline { display: inline; margin: 0; }
label { font-weight: 600; display: block; }
.field { display: grid; gap: 0.25rem; }
.field .hint { font-weight: 400; color: var(--muted); font-size: 0.88rem; }
.field .error { color: var(--warn); font-weight: 600; }
input[type=text], input[type=email], input[type=password], input[type=number], input[type=date], input:not([type]), select, textarea {
  font: inherit; padding: 0.45rem 0.55rem; border: 1px solid #8a939e; border-radius: 4px; width: 100%; max-width: 34rem; background: #fff; color: var(--ink); }
input[readonly] { background: var(--bg); }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--warn); border-width: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 4px; padding: 0.5rem 0.8rem; }
legend { font-weight: 600; padding: 0 0.3rem; }
fieldset label { font-weight: 400; display: flex; gap: 0.4rem; align-items: baseline; margin: 0.2rem 0; }
button, .button { font: inherit; font-weight: 600; background: var(--accent); color: var(--accent-ink); border: 1px solid var(--accent); border-radius: 4px;
  padding: 0.45rem 1rem; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--warn); border-color: var(--warn); }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.6rem 0; }
.pager { display: flex; gap: 1rem; margin: 0.6rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0.5rem 0 1rem; }
dl.facts dt { color: var(--muted); font-weight: 600; }
dl.facts dd { margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 600px) {
  html { font-size: 16px; }
  header.top, nav.sections, main, footer.bottom { padding-left: 0.75rem; padding-right: 0.75rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 0.4rem; }
  table.fields th { width: auto; }
}
`
