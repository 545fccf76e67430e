import { html, type Html } from "./html";

const SECTIONS = [
  ["/admin/merchants", "Merchants"],
  ["/admin/shops", "Shops"],
  ["/admin/operations", "Operations"],
  ["/admin/manual-checks", "Manual checks"],
  ["/admin/late-funds", "Late funds"],
  ["/admin/routes", "Routes and providers"],
  ["/admin/operators", "Operators"],
] as const;

/** Who is signed in and the token their forms carry (see session.ts). */
export interface Viewer {
  actor: string;
  csrf: string;
}

/** The hidden field every console form posts (checked by session.ts). */
export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="_csrf" value="${viewer.csrf}">`;

/** A whole console page: header with the sections and sign-out, then `body`. */
export function page(title: string, viewer: Viewer | null, body: Html, section = ""): Html {
  const nav = viewer
    ? html`<nav aria-label="Sections">${SECTIONS.map(([href, name]) => html`<a href="${href}"${section === href ? html` aria-current="page"` : ""}>${name}</a>`)}</nav>
<form method="post" action="/admin/sign-out">${csrfField(viewer)}<span class="muted">${viewer.actor}</span> <button class="secondary">Sign out</button></form>`
    : "";
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Payment gateway admin</title><link rel="stylesheet" href="/admin/console.css"><script src="/admin/console.js" defer></script></head>
<body><header><strong>Payment gateway admin</strong>${nav}</header>
<main><h1>${title}</h1>${body}</main></body></html>`;
}

/** A notice after a change went through (fixed texts chosen by the handler, never from the URL). */
export const notice = (text: string | undefined) => (text ? html`<p class="notice" role="status">${text}</p>` : "");

/** A secret shown once, with a copy button. */
export const shownOnce = (id: string, label: string, value: string) =>
  html`<div class="secret" role="status"><p><strong>${label}</strong> — shown once: copy it now, it cannot be shown again.</p>
<p><code id="${id}">${value}</code> <button type="button" class="secondary" data-copy="${id}">Copy</button></p></div>`;
