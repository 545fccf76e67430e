/** HTML-escapes a value for text and double-quoted attributes (null and undefined are empty). */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}
