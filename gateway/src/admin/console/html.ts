/** HTML built by template functions: every interpolated value is escaped unless it is already {@link Html}. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function fragment(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join("");
  if (value === null || value === undefined || value === false) return "";
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested Html, arrays of it, null and false are kept or dropped as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? fragment(values[i]) : ""), ""));
}
