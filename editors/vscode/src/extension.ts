// scopelint for VS Code: runs `scopelint lsp` (the project's language server) for Python
// files and Jupyter notebooks, with commands to fix all, restart the server and show its
// output. Shaped after ruff's extension (astral-sh/ruff-vscode): the server is found in
// the selected interpreter's environment or bundled, the settings go to the server as
// initialization options, a settings or interpreter change restarts it.
import * as vscode from "vscode";
import {
  CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  LanguageClient,
} from "vscode-languageclient/node";
import { onSelectedInterpreterChange } from "./python";
import { read, SECTION } from "./settings";
import { createClient, NotRunnable, resolveLaunch } from "./server";

const FIX_ALL_KIND = "source.fixAll.scopelint";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let queue: Promise<void> = Promise.resolve();

function log(line: string): void {
  output.appendLine(`[${new Date().toISOString()}] ${line}`);
}

function folder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

async function showError(message: string): Promise<void> {
  log(message);
  const choice = await vscode.window.showErrorMessage(message, "Show output");
  if (choice) {
    output.show(true);
  }
}

async function stop(): Promise<void> {
  const old = client;
  client = undefined;
  if (old !== undefined) {
    try {
      await old.stop(5000);
    } catch (error) {
      log(`stopping the server: ${error}`);
    }
  }
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  await stop();
  const where = folder();
  const settings = read(where);
  if (!settings.enable) {
    log("scopelint.enable is false: the server is not started");
    return;
  }
  if (!vscode.workspace.isTrusted) {
    log("the workspace is not trusted: the server is not started");
    void vscode.window.showInformationMessage(
      "scopelint does not run in an untrusted workspace: it would start the Python interpreter " +
        "this workspace's settings name. Trust the workspace to lint it.",
    );
    return;
  }
  const started = Date.now();
  let launch;
  try {
    launch = await resolveLaunch(settings, where, context.extensionPath, log);
  } catch (error) {
    if (error instanceof NotRunnable) {
      await showError(`scopelint: ${error.message}`);
      return;
    }
    throw error;
  }
  log(`starting ${launch.description}: ${[launch.command, ...launch.args].join(" ")} (in ${launch.cwd})`);
  if (launch.notice) {
    log(launch.notice);
    void vscode.window.showWarningMessage(`scopelint: ${launch.notice}`, "Show output").then((choice) => {
      if (choice) {
        output.show(true);
      }
    });
  }
  const next = createClient(launch, settings, output, where);
  try {
    await next.start();
  } catch (error) {
    await showError(`scopelint: the server did not start (${launch.description}): ${error}`);
    return;
  }
  client = next;
  const info = next.initializeResult?.serverInfo;
  log(`server started in ${Date.now() - started} ms: ${info?.name ?? "?"} ${info?.version ?? ""}`);
}

/** Restarts run one after another (a settings change during a start waits for it). */
function restart(context: vscode.ExtensionContext): Promise<void> {
  queue = queue.then(
    () => start(context),
    () => start(context),
  );
  return queue.catch((error) => showError(`scopelint: ${error}`));
}

/** Apply the server's `source.fixAll.scopelint` to the active document (for a notebook
 * cell, the server fixes the whole notebook). */
async function fixAll(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (client === undefined || editor === undefined) {
    void vscode.window.showInformationMessage("scopelint: no Python document is active, or the server is not running");
    return;
  }
  const document = editor.document;
  const end = document.lineAt(Math.max(0, document.lineCount - 1)).range.end;
  const actions =
    (await client.sendRequest(CodeActionRequest.type, {
      textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
      range: { start: { line: 0, character: 0 }, end: { line: end.line, character: end.character } },
      context: { diagnostics: [], only: [FIX_ALL_KIND] },
    })) ?? [];
  let applied = false;
  for (const found of actions) {
    if (!("kind" in found) || found.kind !== FIX_ALL_KIND) {
      continue;
    }
    let action: CodeAction = found;
    if (action.edit === undefined) {
      action = await client.sendRequest(CodeActionResolveRequest.type, action);
    }
    if (action.edit !== undefined) {
      const edit = await client.protocol2CodeConverter.asWorkspaceEdit(action.edit);
      applied = (await vscode.workspace.applyEdit(edit)) || applied;
    }
  }
  if (!applied) {
    void vscode.window.showInformationMessage("scopelint: nothing to fix");
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("scopelint");
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("scopelint.restart", () => restart(context)),
    vscode.commands.registerCommand("scopelint.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("scopelint.fixAll", () =>
      fixAll().catch((error) => showError(`scopelint: fix all failed: ${error}`)),
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) {
        log("the settings changed: restarting the server");
        void restart(context);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log("the workspace is now trusted");
      void restart(context);
    }),
  );
  const interpreterChanges = await onSelectedInterpreterChange(() => {
    if (!read(folder()).interpreter.length) {
      log("the Python extension's interpreter changed: restarting the server");
      void restart(context);
    }
  });
  if (interpreterChanges) {
    context.subscriptions.push(interpreterChanges);
  }
  log(`scopelint extension ${context.extension.packageJSON.version} activated`);
  // Not awaited: activation (and the other extensions) need not wait for the interpreter
  // probe and the server's start.
  void restart(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}
