import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { debianTool } from "./debian-tool";

/** Where browser tests keep their screenshots (CI keeps the folder as an artefact). */
export const ARTEFACTS_DIR = path.join(__dirname, "..", "..", ".data", "test-artefacts");

/**
 * The machine's Chromium: `CHROMIUM_PATH`, or Debian's package, installed with apt when missing
 * (Playwright's own browser download is not reachable from where this runs).
 */
const chromiumPath = () => debianTool("/usr/bin/chromium", "chromium", "browser tests need Chromium", { name: "CHROMIUM_PATH", value: process.env.CHROMIUM_PATH });

/** A headless Chromium for one test file (close it in afterAll). */
export function launchBrowser(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
}

/**
 * A page in a context of its own (cookies and storage apart from other pages'; axe needs a page made
 * this way). Closing the page's context closes the page: `await page.context().close()`.
 */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  return context.newPage();
}

/** Saves a full-page screenshot as `<name>.png` among the test artefacts and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTEFACTS_DIR, { recursive: true });
  const file = path.join(ARTEFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The page's accessibility violations (axe-core, WCAG 2 A and AA rules), as "rule: target" lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
}
