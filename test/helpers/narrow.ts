// A page laid out narrow, as test/e2e/console-narrow.test.ts checks it: what sticks out past the
// right edge of the window. The page's own sideways scroll, and each rendered element whose box
// ends past the edge, unless it sits inside one of the wrappers that scroll on purpose (which must
// itself fit and scroll), or is only there for screen readers. Page-side code as text: the node
// project has no DOM types.
import type { Page } from "playwright-core";

/** The wrappers that scroll sideways on purpose: data tables and the supervisor's agents board. */
export const SCROLLERS = ".scroll-x, .board-section";

export const OVERFLOW_IN_PAGE = `(() => {
  const scrollers = ${JSON.stringify(SCROLLERS)};
  const width = document.documentElement.clientWidth;
  const found = [];
  if (document.documentElement.scrollWidth > width) found.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + width);
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "") + " \\"" + (el.textContent || "").trim().slice(0, 40) + "\\"";
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest(".visually-hidden") || el.parentElement?.closest(scrollers)) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > width + 0.5) found.push(describe(el) + " ends at " + Math.round(box.right));
  }
  // Folded, the navigation leaves no gap: the view starts right under the header.
  const header = document.querySelector(".console-header");
  const nav = document.getElementById("console-nav");
  const main = document.getElementById("main");
  if (header && nav && main && getComputedStyle(nav).display === "none") {
    const gap = main.getBoundingClientRect().top - header.getBoundingClientRect().bottom;
    if (gap > 1) found.push("the view starts " + Math.round(gap) + " px below the header");
  }
  for (const wrapper of document.querySelectorAll(scrollers)) {
    const style = getComputedStyle(wrapper);
    if (style.overflowX !== "auto" && style.overflowX !== "scroll") found.push(describe(wrapper) + " does not scroll");
    if (wrapper.getBoundingClientRect().right > width + 0.5) found.push(describe(wrapper) + " is wider than the window");
  }
  return found;
})()`;

/** What sticks out of `page` as it is laid out now. */
export async function overflowOf(page: Page): Promise<string[]> {
  const found: unknown = await page.evaluate(OVERFLOW_IN_PAGE);
  if (!Array.isArray(found)) throw new Error("the page measured nothing");
  return found.map(String);
}
