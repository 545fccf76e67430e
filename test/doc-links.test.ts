/**
 * A clone holds everything its documents point at: every relative link of every Markdown file
 * resolves to a file or folder inside the repository, and a link to a heading names one that
 * exists (GitHub's anchors). Web links (https:, mailto:) are not followed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.join(__dirname, "..");
const SKIPPED_DIRS = new Set(["node_modules", ".git", ".data", "dist"]);

function markdownFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : markdownFiles(full);
    return entry.name.endsWith(".md") ? [full] : [];
  });
}

/** The text outside fenced code blocks and inline code, where links are links. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "``");

/** Inline links and images `[text](target)`, and reference definitions `[name]: target`. */
const linkTargets = (markdown: string) => [...prose(markdown).matchAll(/\]\(([^)\s]+)\)|^\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1] ?? m[2]);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");

/** The anchors of a Markdown file's headings; a repeated heading gets `-1`, `-2`, … */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const headings = prose(readFileSync(file, "utf8")).split("\n").flatMap((line) => /^#{1,6} (.*)$/.exec(line)?.[1] ?? []);
  return new Set(
    headings.map((heading) => {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return n === 0 ? base : `${base}-${n}`;
    }),
  );
}

/** What is wrong with `target`, linked from `file`; null when nothing is. */
function problemOf(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return target.toLowerCase().startsWith("file:") ? "a file: URL" : null;
  const [pathPart, anchor] = target.split("#", 2);
  if (pathPart.startsWith("/")) return "an absolute path";
  const resolved = pathPart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
  if (path.relative(ROOT, resolved).startsWith("..")) return "outside the repository";
  if (!existsSync(resolved)) return "no such file";
  if (anchor && resolved.endsWith(".md") && statSync(resolved).isFile() && !anchorsOf(resolved).has(anchor)) return "no such heading";
  return null;
}

it("links from every Markdown file only to files and headings inside the repository", () => {
  const files = markdownFiles();
  expect(files.length).toBeGreaterThan(20);
  const links = files.flatMap((file) => linkTargets(readFileSync(file, "utf8")).map((target) => ({ file, target })));
  expect(links.length).toBeGreaterThan(200);
  const broken = links.flatMap(({ file, target }) => {
    const problem = problemOf(file, target);
    return problem ? [`${path.relative(ROOT, file)}: ${target} (${problem})`] : [];
  });
  expect(broken).toEqual([]);
});

it("finds what a broken link looks like", () => {
  const readme = path.join(ROOT, "README.md");
  expect(problemOf(readme, "../elsewhere/NOTES.md")).toBe("outside the repository");
  expect(problemOf(readme, "/srv/notes/NOTES.md")).toBe("an absolute path");
  expect(problemOf(readme, "docs/missing.md")).toBe("no such file");
  expect(problemOf(readme, "docs/api.md#no-such-heading")).toBe("no such heading");
  expect(problemOf(readme, "docs/api.md#post-v1get_operation_state")).toBeNull();
  expect(problemOf(readme, "https://example.com/")).toBeNull();
});
