// Which `scopelint` runs the language server, and the client that talks to it over stdio.
//
// The order (as ruff's extension finds `ruff`): an executable named by `scopelint.path`;
// with `importStrategy: useBundled`, the scopelint bundled in this extension; otherwise the
// scopelint installed in the interpreter's environment (`scopelint.interpreter`, else the
// Python extension's selection), a `scopelint` on PATH, and last the bundled one. When none
// can run, `NotRunnable` says why and how to install it.
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
} from "vscode-languageclient/node";
import { selectedInterpreter } from "./python";
import { initializationOptions, Settings } from "./settings";

export interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How it was found, for the output and for messages. */
  description: string;
  /** A notice for the user (e.g. the environment lacks scopelint, the bundled one runs). */
  notice?: string;
}

/** No scopelint can be run: the message says why and what to do. */
export class NotRunnable extends Error {}

interface Probe {
  python: string; // "3.11"
  scopelint: string | null; // its version, or null when it cannot be imported
  pygls: boolean;
}

// Run by the interpreter: its version, and whether scopelint and pygls import. The
// current folder is left off sys.path, so that a folder named scopelint in the
// workspace is not mistaken for the package.
const PROBE = `
import json, sys
sys.path = [p for p in sys.path if p not in ("", ".")]
out = {"python": "%d.%d" % sys.version_info[:2], "scopelint": None, "pygls": False}
try:
    import scopelint
    out["scopelint"] = getattr(scopelint, "__version__", "?")
    import pygls
    out["pygls"] = True
except Exception:
    pass
print(json.dumps(out))
`;

function run(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 30000, env: env ?? process.env }, (error, stdout, stderr) =>
      error ? reject(new Error((stderr || error.message).trim())) : resolve(stdout),
    );
  });
}

async function probe(interpreter: string[], env?: NodeJS.ProcessEnv): Promise<Probe> {
  const [command, ...args] = interpreter;
  const out = await run(command, [...args, "-c", PROBE], env);
  return JSON.parse(out.trim().split("\n").pop() ?? "{}") as Probe;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const candidate = path.join(dir, process.platform === "win32" ? `${name}.exe` : name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The bundled scopelint (bundled/libs/py3.X, made by build.py --bundle) for `python`, a
 * version like "3.11"; undefined when this build has none for it. */
function bundledLibs(extensionPath: string, python: string): string | undefined {
  const libs = path.join(extensionPath, "bundled", "libs", `py${python}`);
  return fs.existsSync(path.join(libs, "scopelint", "__init__.py")) ? libs : undefined;
}

function bundledPythons(extensionPath: string): string[] {
  try {
    return fs
      .readdirSync(path.join(extensionPath, "bundled", "libs"))
      .filter((d) => /^py3\.\d+$/.test(d))
      .map((d) => d.slice(2));
  } catch {
    return [];
  }
}

function installHint(interpreter: string): string {
  return `install it there (\`${interpreter} -m pip install 'scopelint[lsp]'\`)`;
}

async function bundled(
  extensionPath: string,
  interpreter: string[],
  description: string,
): Promise<Launch> {
  let found: Probe;
  try {
    found = await probe(interpreter);
  } catch (error) {
    throw new NotRunnable(`the Python interpreter \`${interpreter[0]}\` does not run: ${error}`);
  }
  const libs = bundledLibs(extensionPath, found.python);
  if (libs === undefined) {
    const have = bundledPythons(extensionPath);
    throw new NotRunnable(
      have.length
        ? `this build of the extension bundles scopelint for Python ${have.join(", ")}, not ${found.python} (\`${interpreter[0]}\`)`
        : "this build of the extension bundles no scopelint",
    );
  }
  const [command, ...args] = interpreter;
  // cwd: the bundle, which `python -m` puts first on sys.path.
  return {
    command,
    args: [...args, "-m", "scopelint", "lsp"],
    cwd: libs,
    env: { ...process.env, PYTHONPATH: libs, PYTHONNOUSERSITE: "1" },
    description: `the bundled scopelint, run by ${interpreter[0]} (Python ${found.python})`,
    notice: description,
  };
}

export async function resolveLaunch(
  settings: Settings,
  folder: vscode.WorkspaceFolder | undefined,
  extensionPath: string,
  log: (line: string) => void,
): Promise<Launch> {
  const cwd = folder?.uri.fsPath ?? process.cwd();
  for (const candidate of settings.path) {
    if (fs.existsSync(candidate)) {
      return { command: candidate, args: ["lsp"], cwd, env: process.env, description: `scopelint.path: ${candidate}` };
    }
    log(`scopelint.path: ${candidate} does not exist`);
  }

  let interpreter = settings.interpreter;
  let from = "scopelint.interpreter";
  if (!interpreter.length) {
    const selected = await selectedInterpreter(folder);
    if (selected) {
      interpreter = [selected];
      from = "the Python extension's interpreter";
    }
  }
  const fallback = onPath("python3") ?? onPath("python");

  if (settings.importStrategy === "useBundled") {
    const python = interpreter.length ? interpreter : fallback ? [fallback] : [];
    if (!python.length) {
      throw new NotRunnable("no Python interpreter to run the bundled scopelint (set scopelint.interpreter)");
    }
    const launch = await bundled(extensionPath, python, "");
    return { ...launch, notice: undefined };
  }

  let missing: string | undefined;
  let runs = false; // the interpreter runs (and lacks scopelint)
  if (interpreter.length) {
    log(`Python interpreter (${from}): ${interpreter.join(" ")}`);
    try {
      const found = await probe(interpreter);
      runs = true;
      if (found.scopelint !== null && found.pygls) {
        const [command, ...args] = interpreter;
        return {
          command,
          args: [...args, "-m", "scopelint", "lsp"],
          cwd,
          env: process.env,
          description: `scopelint ${found.scopelint} in ${interpreter[0]} (Python ${found.python})`,
        };
      }
      missing =
        found.scopelint === null
          ? `scopelint is not installed in ${interpreter[0]}: ${installHint(interpreter[0])}`
          : `scopelint ${found.scopelint} in ${interpreter[0]} lacks its language-server extra: ${installHint(interpreter[0])}`;
    } catch (error) {
      missing = `the Python interpreter \`${interpreter[0]}\` (${from}) does not run: ${error}`;
    }
    log(missing);
  }

  const executable = onPath("scopelint");
  if (executable !== undefined && !interpreter.length) {
    // Only without an interpreter: one that was chosen and lacks scopelint is not
    // silently replaced by some other environment's.
    return { command: executable, args: ["lsp"], cwd, env: process.env, description: `${executable} (on PATH)` };
  }

  const python = runs ? interpreter : fallback ? [fallback] : [];
  if (python.length) {
    try {
      const launch = await bundled(extensionPath, python, missing ?? "");
      const notice = missing ? `${missing}. Using the scopelint bundled with the extension meanwhile.` : undefined;
      return { ...launch, notice };
    } catch (error) {
      log(`no bundled scopelint: ${error instanceof Error ? error.message : error}`);
    }
  }
  throw new NotRunnable(
    missing ??
      "scopelint is not installed: no Python interpreter is selected (scopelint.interpreter, or the Python extension), " +
        "no `scopelint` is on PATH, and this build of the extension bundles none for the Python here. " +
        "Install it with `pip install 'scopelint[lsp]'` in your project's environment.",
  );
}

export function documentSelector() {
  return [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    // Notebook cells (synchronised as notebook documents, as the server asks).
    { scheme: "vscode-notebook-cell", language: "python" },
    { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
  ];
}

export function createClient(
  launch: Launch,
  settings: Settings,
  output: vscode.OutputChannel,
  folder: vscode.WorkspaceFolder | undefined,
): LanguageClient {
  const serverOptions: ServerOptions = {
    command: launch.command,
    args: launch.args,
    options: { cwd: launch.cwd, env: launch.env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: initializationOptions(settings),
    workspaceFolder: folder,
  };
  return new LanguageClient("scopelint", "scopelint", serverOptions, clientOptions);
}
