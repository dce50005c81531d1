/**
 * The one stylesheet of the report pages, served by the service itself (no font, icon or script
 * from anywhere): a plain document on screen, and an A4 page with running margins in print.
 */
export const REPORT_CSS = `
:root { --ink: #1b1f24; --muted: #5b6470; --line: #d0d6de; --accent: #0b5cad; --warn: #8a1c1c; --warn-bg: #fdecea; --ok: #155724; --ok-bg: #e6f4ea; }
* { box-sizing: border-box; }
html { font-family: "Helvetica Neue", Arial, "Liberation Sans", sans-serif; font-size: 15px; color: var(--ink); line-height: 1.45; }
body { margin: 0 auto; max-width: 58rem; padding: 1.5rem 2rem 3rem; }
h1 { font-size: 1.45rem; margin: 0.2rem 0 0.6rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.3rem; }
p { margin: 0.35rem 0; }
table { border-collapse: collapse; width: 100%; margin: 0.4rem 0 0.8rem; font-size: 0.92rem; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.45rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); white-space: nowrap; }
table.fields th { width: 13rem; }
code, .hash { font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
.letterhead { display: flex; justify-content: space-between; align-items: flex-end; border-bottom: 3px solid var(--accent); padding-bottom: 0.5rem; margin-bottom: 1rem; }
.letterhead .lab { font-size: 1.25rem; font-weight: 700; color: var(--accent); }
.letterhead .lines { font-size: 0.85rem; color: var(--muted); }
.letterhead .right { text-align: right; font-size: 0.85rem; color: var(--muted); }
.banner { padding: 0.6rem 0.9rem; border-radius: 4px; margin: 0.8rem 0; font-weight: 600; }
.banner.warn { background: var(--warn-bg); color: var(--warn); border: 1px solid #f5c2c0; }
.banner.ok { background: var(--ok-bg); color: var(--ok); border: 1px solid #b7dfc2; }
.banner.info { background: #eef4fb; color: var(--accent); border: 1px solid #c7dbf2; }
.classification { font-weight: 700; }
.classification.pathogenic, .classification.likely_pathogenic { color: var(--warn); }
.muted { color: var(--muted); }
.signature { border: 1px solid var(--line); border-radius: 4px; padding: 0.7rem 1rem; margin: 0.6rem 0; page-break-inside: avoid; }
.signature .who { font-weight: 700; font-size: 1.05rem; }
form.sign { border: 2px solid var(--accent); border-radius: 6px; padding: 1rem 1.2rem; margin: 1.4rem 0; }
form.sign label { display: block; margin: 0.5rem 0; }
button { font: inherit; font-weight: 600; background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: 0.55rem 1.1rem; cursor: pointer; }
a { color: var(--accent); }
ul.reasons { margin: 0.4rem 0 0.8rem 1.2rem; padding: 0; }
footer { margin-top: 2rem; border-top: 1px solid var(--line); padding-top: 0.5rem; font-size: 0.8rem; color: var(--muted); }
.disagreements h2 { border: 0; margin: 0 0 0.3rem; font-size: 1rem; color: inherit; }
.disagreements { font-weight: 400; }
.methods p, .methods li { font-size: 0.9rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.no-print { }
@media (max-width: 40rem) {
  body { padding: 0.8rem 0.9rem 2rem; }
  .letterhead { display: block; }
  .letterhead .right { text-align: left; margin-top: 0.4rem; }
  table.fields th { width: auto; white-space: normal; }
  table.fields tr, table.fields th, table.fields td { display: block; border: 0; padding: 0.15rem 0; }
  table.fields tr { border-bottom: 1px solid var(--line); padding: 0.3rem 0; }
  table.variants thead { display: none; }
  table.variants tr, table.variants td { display: block; border: 0; padding: 0.15rem 0; }
  table.variants tr { border-bottom: 1px solid var(--line); padding: 0.5rem 0; }
  table.variants td::before { content: attr(data-label); display: block; font-weight: 600; color: var(--muted); font-size: 0.8rem; }
}
@media print {
  @page {
    size: A4; margin: 18mm 14mm 18mm;
    @bottom-right { content: "Page " counter(page) " of " counter(pages); font-size: 8pt; color: #5b6470; }
  }
  html { font-size: 10.5pt; }
  body { max-width: none; padding: 0; }
  .no-print { display: none !important; }
  a { color: inherit; text-decoration: none; }
  h2 { page-break-after: avoid; }
  tr, .variant { page-break-inside: avoid; }
  .banner { border-width: 2px; }
}
`
