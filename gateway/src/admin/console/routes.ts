import Router from "@koa/router";
import type { Logger } from "@pgw/kit/runtime";
import type Koa from "koa";
import type { KeyCache } from "../../auth/key-cache";
import type { GatewayClients } from "../../clients";
import { setPageSecurityHeaders } from "../../http/page-headers";
import { ROUTER_OPTIONS } from "../../http/router-options";
import { adminActor } from "../admin-auth";
import { CONSOLE_CSS, CONSOLE_JS } from "./assets";
import { errorBlock, errorSentences, renderError } from "./errors";
import { html } from "./html";
import { page, type Viewer } from "./layout";
import { merchantPages } from "./pages/merchants";
import { operationPages } from "./pages/operations";
import { operatorPages } from "./pages/operators";
import { queuePages } from "./pages/queues";
import { routingPages } from "./pages/routing";
import { shopPages } from "./pages/shop";
import { checkCsrf, csrfOf, endSession, readForm, sessionToken, startSession } from "./session";

export interface ConsoleRouteDeps {
  clients: GatewayClients;
  keyCache: KeyCache;
  paymentPageHost: string;
  /** The admin API's guard (admin-auth.ts): the console signs in through it. */
  authenticate: Koa.Middleware;
  /** Outside local mode the session cookie is Secure. */
  localMode: boolean;
  log: Logger;
}

function signInPage(ctx: Koa.Context, sentences: string[] = []): void {
  ctx.type = "html";
  ctx.body = page(
    "Sign in",
    null,
    html`${sentences.length ? errorBlock(sentences) : ""}<form method="post" action="/admin/sign-in">
<label><span>Operator token (the admin token in local mode)</span><input name="token" type="password" required autocomplete="current-password" size="56"></label>
<button>Sign in</button></form>`,
  ).text;
}

/**
 * The admin console (docs/decisions/0018-admin-console-server-rendered.md): server-rendered pages
 * on the admin port. Signing in checks the token through the admin API's own guard and keeps it in
 * an HttpOnly, SameSite=Strict cookie; every page checks it again the same way (so a revoked
 * operator is out at once), and every form post must carry the session's CSRF token.
 */
export function consoleRoutes({ clients, keyCache, paymentPageHost, authenticate, localMode, log }: ConsoleRouteDeps): Router {
  const open = new Router(ROUTER_OPTIONS);
  open.use((ctx, next) => (setPageSecurityHeaders(ctx, "console"), ctx.set("Cache-Control", "no-store"), next()));
  open.get("/admin/console.css", (ctx) => ((ctx.type = "text/css"), (ctx.body = CONSOLE_CSS)));
  open.get("/admin/console.js", (ctx) => ((ctx.type = "application/javascript"), (ctx.body = CONSOLE_JS)));
  open.get("/admin/sign-in", (ctx) => signInPage(ctx));

  /** Runs `then` as the operator whose token this is; a token that does not sign in renders the sign-in page with why. */
  const asOperator = async (ctx: Koa.Context, token: string, then: (viewer: Viewer) => Promise<void>) => {
    ctx.request.headers.authorization = `Bearer ${token}`;
    let signedIn = false;
    try {
      await authenticate(ctx, async () => {
        signedIn = true;
        await then({ actor: adminActor(ctx), csrf: csrfOf(token) });
      });
    } catch (err) {
      if (signedIn) return renderError(ctx, err, ctx.state.viewer ?? null);
      endSession(ctx);
      const { status, sentences } = errorSentences(err);
      ctx.status = status;
      signInPage(ctx, sentences);
    }
  };

  open.post("/admin/sign-in", async (ctx) => {
    const token = (await readForm(ctx).catch(() => ({}) as Record<string, string>)).token?.trim() ?? "";
    await asOperator(ctx, token, async () => {
      startSession(ctx, token, !localMode);
      ctx.status = 303;
      ctx.redirect("/admin/merchants");
    });
  });

  const pages = new Router(ROUTER_OPTIONS);
  pages.use(async (ctx, next) => {
    const token = sessionToken(ctx);
    if (!token) return ctx.redirect("/admin/sign-in");
    await asOperator(ctx, token, async (viewer) => {
      ctx.state.viewer = viewer;
      if (ctx.method === "POST") {
        ctx.state.form = await readForm(ctx);
        checkCsrf(ctx.state.form, viewer);
      }
      await next();
    });
  });
  pages.get(["/admin", "/admin/"], (ctx) => ctx.redirect("/admin/merchants"));
  pages.post("/admin/sign-out", (ctx) => {
    endSession(ctx);
    ctx.status = 303;
    ctx.redirect("/admin/sign-in");
  });
  const deps = { clients, paymentPageHost, log, evictKeys: ({ shopId, apiKeyId }: { shopId?: string; apiKeyId?: string }) => keyCache.evictWhere((p) => p.shopId === shopId || p.apiKeyId === apiKeyId) };
  merchantPages(pages, deps);
  shopPages(pages, deps);
  operationPages(pages, deps);
  queuePages(pages, deps);
  routingPages(pages, deps);
  operatorPages(pages, deps, log);

  open.use(pages.routes());
  return open;
}
