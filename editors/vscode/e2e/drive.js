// Drives a real VS Code (code-server, in a Chromium that playwright-core starts) with the
// scopelint extension installed: opens a buggy PyTorch file, reads its diagnostics from
// the Problems panel, applies a quick fix and saves, opens a notebook and reads its cells'
// diagnostics, reads the extension's output, then points scopelint.interpreter at a Python
// without scopelint and reads the notice. Writes what it saw and how long each step took
// as JSON (tests/test_vscode_e2e.py checks it), and screenshots.
//
// node drive.js CONFIG.json   (NODE_PATH must reach playwright-core)
// CONFIG: {url, chromium, workspace, file, notebook, screenshots, out, bareInterpreter}
"use strict";

const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const result = { steps: [], timings: {}, problems: {}, errors: [] };
const t0 = Date.now();

function step(name) {
  result.steps.push({ name, at: Date.now() - t0 });
  fs.writeFileSync(config.out, JSON.stringify(result, null, 2));
  console.error(`[drive ${((Date.now() - t0) / 1000).toFixed(1)}s] ${name}`);
}

async function waitFor(what, fn, timeoutMs = 60000, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last})`);
}

async function command(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: 15000 });
  await page.keyboard.press("Enter");
}

async function openFile(page, name) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 15000 });
  await input.fill(name);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first();
  await row.waitFor({ state: "visible", timeout: 30000 });
  await page.keyboard.press("Enter");
  await page.locator(`.tab[aria-label^="${name}"]`).first().waitFor({ state: "visible", timeout: 30000 });
}

/** The Problems panel's rows (file rows and marker rows), as text: a marker's source and
 * code ("scopelint(SL107)", the parentheses drawn by CSS) as the panel shows them. */
async function problems(page) {
  const rows = await page.locator(".markers-panel .monaco-list-row").allInnerTexts();
  return rows.map((row) =>
    row.replace(/scopelint\s*\(?\s*(SL\d+)\s*\)?/g, "scopelint($1)").replace(/\s*\n\s*/g, " ").trim(),
  );
}

/** The Problems panel's marker rows under each file's row ("train.py 2"). */
function grouped(rows) {
  const out = {};
  let current = null;
  for (const row of rows) {
    if (!row.includes("scopelint(")) {
      current = row.replace(/\s+\d+$/, "");
      out[current] = [];
    } else if (current !== null) {
      out[current].push(row);
    }
  }
  return out;
}

/** The scopelint codes shown in the Problems panel ("scopelint(SL107)"). */
function codes(rows) {
  const out = [];
  for (const row of rows) {
    for (const m of row.matchAll(/scopelint\((SL\d+)\)/g)) {
      out.push(m[1]);
    }
  }
  return out.sort();
}

/** VS Code asks whether to trust a folder it opens for the first time: answer. */
async function answerTrust(page, answer) {
  const button = page.locator(".monaco-dialog-box .monaco-button", { hasText: answer });
  await button.waitFor({ state: "visible", timeout: 30000 });
  await button.click();
  await page.locator(".monaco-dialog-box").waitFor({ state: "detached", timeout: 15000 });
  step(`trust: ${answer}`);
}

async function notifications(page) {
  return page.locator(".notifications-toasts .notification-list-item-message").allInnerTexts();
}

(async () => {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("pageerror", (error) => result.errors.push(`pageerror: ${error.message}`));
    await page.goto(`${config.url}/?folder=${encodeURIComponent(config.workspace)}`);
    await page.locator(".monaco-workbench .part.statusbar").waitFor({ state: "visible", timeout: 120000 });
    step("workbench loaded");
    await answerTrust(page, "Yes, I trust the authors");

    await command(page, "View: Focus Problems (Errors, Warnings, Infos)");
    await page.locator(".markers-panel").waitFor({ state: "attached", timeout: 30000 });
    step("problems panel open");

    const opened = Date.now();
    await openFile(page, config.file);
    step(`opened ${config.file}`);
    const expected = config.expectedCodes;
    await waitFor(`the diagnostics ${expected} in the Problems panel`, async () => {
      const got = codes(await problems(page));
      return expected.every((c) => got.includes(c));
    }, 180000);
    result.timings.first_diagnostics_ms = Date.now() - opened;
    result.timings.first_diagnostics_from_load_ms = Date.now() - t0;
    result.problems.file = await problems(page);
    step("diagnostics shown");
    await page.waitForTimeout(500); // the squiggles are drawn
    await page.screenshot({ path: path.join(config.screenshots, "vscode-diagnostics.png") });
    step("screenshot taken");

    // The quick fix: to the problem (F8), the code actions (Ctrl+.), the scopelint one.
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    const fixStart = Date.now();
    await page.keyboard.press("F8");
    await page.keyboard.press("Escape"); // the peek widget F8 opens
    await page.keyboard.press("Control+.");
    const action = page.locator(".action-widget .monaco-list-row", { hasText: config.quickFix }).first();
    await action.waitFor({ state: "visible", timeout: 60000 });
    result.problems.actions = await page.locator(".action-widget .monaco-list-row").allInnerTexts();
    // The widget takes keys, not clicks (a pointer block covers it): down to the action.
    const focused = page.locator(".action-widget .monaco-list-row.focused");
    for (let i = 0; i < 10 && !(await focused.innerText()).includes(config.quickFix); i++) {
      await page.keyboard.press("ArrowDown");
    }
    await page.keyboard.press("Enter");
    await waitFor(`${config.fixedCode} gone from the Problems panel`, async () => {
      const got = codes(await problems(page));
      return !got.includes(config.fixedCode);
    }, 60000);
    result.timings.quick_fix_ms = Date.now() - fixStart;
    await page.keyboard.press("Control+S");
    await waitFor("the file saved", async () => fs.readFileSync(path.join(config.workspace, config.file), "utf8") !== config.original, 30000);
    result.problems.file_after_fix = await problems(page);
    step("quick fix applied and saved");

    // The notebook: its cells' diagnostics.
    const nbOpened = Date.now();
    await openFile(page, config.notebook);
    await waitFor(`the notebook's diagnostics ${config.notebookCodes}`, async () => {
      const got = codes(await problems(page));
      return config.notebookCodes.every((c) => got.includes(c));
    }, 120000);
    result.timings.notebook_diagnostics_ms = Date.now() - nbOpened;
    result.problems.notebook = await problems(page);
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(config.screenshots, "vscode-notebook.png") });
    step("notebook diagnostics shown");

    // The extension's output (its "Show output" command): how the server was found and
    // how long it took to start.
    await command(page, "scopelint: Show output");
    const outputLines = page.locator(".part.panel .output-view .view-lines");
    const outputText = async () => (await outputLines.innerText()).replace(/\u00a0/g, " ");
    await waitFor("the output channel's text", async () => /server started in \d+ ms/.test(await outputText()), 30000);
    result.output = await outputText();
    const started = /server started in (\d+) ms/.exec(result.output);
    result.timings.server_start_ms = started ? Number(started[1]) : null;
    step("output read");

    // An interpreter without scopelint: the notice, and the bundled scopelint lints.
    if (config.bareInterpreter) {
      const settingsPath = path.join(config.workspace, ".vscode", "settings.json");
      const settings = JSON.parse(fs.readFileSync(settingsPath, "utf8"));
      settings["scopelint.interpreter"] = [config.bareInterpreter];
      fs.writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
      await waitFor("the notice that scopelint is not installed", async () => {
        const shown = await notifications(page);
        result.notifications = shown;
        return shown.some((m) => m.includes("scopelint is not installed in"));
      }, 90000);
      await command(page, "View: Focus Problems (Errors, Warnings, Infos)");
      await waitFor("the notebook's diagnostics again (from the bundled scopelint)", async () => {
        const got = codes(await problems(page));
        return config.notebookCodes.every((c) => got.includes(c));
      }, 120000);
      result.problems.bundled = await problems(page);
      step("bundled fallback linted");
    }
    // "Fix all" in a notebook cell: the server's source.fixAll fixes the notebook.
    if (config.notebookFixAll) {
      const nbPath = path.join(config.workspace, config.notebook);
      const before = fs.readFileSync(nbPath, "utf8");
      await openFile(page, config.notebook);
      const cells = page.locator(".notebook-editor .cell-editor-container .monaco-editor .view-lines");
      await cells.last().click();
      const fixAllStart = Date.now();
      await command(page, "scopelint: Fix all auto-fixable problems");
      await waitFor(`${config.notebookFixAll.gone} gone from the notebook's problems`, async () => {
        const mine = codes(grouped(await problems(page))[config.notebook] ?? []);
        return mine.length > 0 && !mine.includes(config.notebookFixAll.gone);
      }, 60000);
      result.timings.fix_all_ms = Date.now() - fixAllStart;
      await page.keyboard.press("Control+S");
      await waitFor("the notebook saved", async () => fs.readFileSync(nbPath, "utf8") !== before, 30000);
      result.problems.notebook_after_fix_all = await problems(page);
      step("fix all applied to the notebook and saved");
    }

    // An untrusted workspace: no server, a notice.
    if (config.untrustedWorkspace) {
      await page.goto(`${config.url}/?folder=${encodeURIComponent(config.untrustedWorkspace)}`);
      await page.locator(".monaco-workbench .part.statusbar").waitFor({ state: "visible", timeout: 120000 });
      await answerTrust(page, "No, I don't trust the authors");
      await openFile(page, config.file);
      await waitFor("the notice that scopelint does not run untrusted", async () => {
        const shown = await notifications(page);
        result.untrusted_notifications = shown;
        return shown.some((m) => m.includes("untrusted workspace"));
      }, 90000);
      await page.waitForTimeout(5000); // time enough for diagnostics, were a server running
      await command(page, "View: Focus Problems (Errors, Warnings, Infos)");
      result.problems.untrusted = await problems(page);
      step("untrusted workspace: notice, no server");
    }
    result.ok = true;
  } catch (error) {
    result.ok = false;
    result.error = String(error && error.stack ? error.stack : error);
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages.length) {
        await pages[0].screenshot({ path: path.join(config.screenshots, "vscode-failure.png") });
      }
    } catch {
      // no screenshot
    }
  } finally {
    result.timings.total_ms = Date.now() - t0;
    fs.writeFileSync(config.out, JSON.stringify(result, null, 2));
    await browser.close();
  }
})();
