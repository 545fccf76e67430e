import { escapeHtml } from "../../http/escape-html";

/** HTML built by template functions: every interpolated value is escaped unless it is already {@link Html}. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

function fragment(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join("");
  return value === false ? "" : escapeHtml(value);
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested Html, arrays of it, null and false are kept or dropped as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? fragment(values[i]) : ""), ""));
}
