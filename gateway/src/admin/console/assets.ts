/**
 * The console's only stylesheet and script, served from the admin port (the page's CSP allows
 * nothing else). The script only copies a shown-once secret to the clipboard; every page works
 * without it.
 */
export const CONSOLE_CSS = `
:root{--fg:#1a1a1a;--muted:#595959;--line:#d0d0d0;--accent:#0b57d0;--bad:#a50e0e;--good:#146c2e;--bg:#fff;--panel:#f5f6f8}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.6rem 1.2rem;border-bottom:1px solid var(--line);background:var(--panel)}
header strong{margin-right:1rem}nav a{margin-right:1rem;color:var(--accent)}nav a[aria-current=page]{font-weight:600;text-decoration:none;color:var(--fg)}
header form{margin-left:auto}main{max-width:72rem;padding:1rem 1.2rem}
h1{font-size:1.5rem;margin:.4rem 0 1rem}h2{font-size:1.15rem;margin:1.6rem 0 .6rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted)}code{font-size:.9em;word-break:break-all}
form.inline{display:inline}fieldset{border:1px solid var(--line);padding:.6rem .8rem;margin:.6rem 0}
label{display:inline-block;margin:.2rem 1rem .2rem 0}label span{display:block;font-size:.85em;color:var(--muted)}
input,select,button{font:inherit;padding:.3rem .5rem;border:1px solid #8a8a8a;border-radius:4px;background:#fff;color:var(--fg)}
button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
:focus-visible{outline:3px solid #f9ab00;outline-offset:2px}
.notice,.error,.secret{padding:.6rem .8rem;border-radius:4px;margin:.6rem 0}.notice{background:#e6f4ea;color:var(--good)}
.error{background:#fce8e6;color:var(--bad)}.secret{background:#fef7e0;border:1px solid #f9ab00}
.secret code{font-size:1rem}.muted{color:var(--muted)}.pager{margin:.6rem 0}
`;

export const CONSOLE_JS = `
document.addEventListener("click", function (e) {
  var button = e.target.closest("button[data-copy]");
  if (!button) return;
  var value = document.getElementById(button.getAttribute("data-copy")).textContent;
  navigator.clipboard.writeText(value).then(function () { button.textContent = "Copied"; });
});
`;
