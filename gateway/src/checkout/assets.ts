import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The checkout's static files, in gateway/src/checkout/assets (copied beside the bundle by scripts/build-units.ts). */
export const CHECKOUT_ASSET_FILES = ["checkout.js", "checkout.css"] as const;

const CONTENT_TYPES: Record<string, string> = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

/** One static file as served: its content type and bytes. */
export interface CheckoutAsset {
  contentType: string;
  body: Buffer;
}

/** The checkout's script and stylesheet, each under a name that carries its content hash. */
export interface CheckoutAssets {
  /** The page's script URL, `/pay/assets/checkout-<hash>.js`. */
  script: string;
  /** The page's stylesheet URL, `/pay/assets/checkout-<hash>.css`. */
  stylesheet: string;
  /** Files by their served name (`checkout-<hash>.js`). */
  byName: ReadonlyMap<string, CheckoutAsset>;
}

/** Where the assets are served from. */
export const ASSETS_PATH = "/pay/assets";

/**
 * Reads the checkout's script and stylesheet once at start-up. `entryDir` is the directory of the
 * gateway's entry: `gateway/dist` in a build, which holds them beside the bundle, or `gateway/src`.
 * Each is named after a hash of its content, so browsers may keep it for good: a changed file is a
 * new URL.
 */
export function readCheckoutAssets(entryDir: string): CheckoutAssets {
  const byName = new Map<string, CheckoutAsset>();
  const urls: string[] = [];
  for (const file of CHECKOUT_ASSET_FILES) {
    const candidates = [path.join(entryDir, file), path.join(entryDir, "checkout", "assets", file)];
    const found = candidates.find((candidate) => existsSync(candidate));
    if (!found) throw new Error(`a checkout asset is missing: none of ${candidates.join(", ")} exists`);
    const body = readFileSync(found);
    const ext = path.extname(file);
    const name = `${path.basename(file, ext)}-${createHash("sha256").update(body).digest("hex").slice(0, 16)}${ext}`;
    byName.set(name, { contentType: CONTENT_TYPES[ext], body });
    urls.push(`${ASSETS_PATH}/${name}`);
  }
  return { script: urls[0], stylesheet: urls[1], byName };
}
