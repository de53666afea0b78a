// The Python extension (ms-python.python), when present: the interpreter it has selected
// for a folder, and a notice when that selection changes. Only the few members of its
// documented `environments` API that scopelint uses are typed here.
import * as vscode from "vscode";

export const PYTHON_EXTENSION_ID = "ms-python.python";

type EnvironmentPath = { id: string; path: string };
type ResolvedEnvironment = { executable: { uri?: vscode.Uri } };
type ActiveEnvironmentPathChangeEvent = EnvironmentPath & {
  resource?: vscode.WorkspaceFolder | vscode.Uri;
};

interface PythonExtensionApi {
  environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<ActiveEnvironmentPathChangeEvent>;
  };
}

async function api(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const exports = extension.isActive ? extension.exports : await extension.activate();
    return exports?.environments ? exports : undefined;
  } catch {
    return undefined;
  }
}

/** The interpreter the Python extension selected for `folder`, or undefined (no
 * extension, or nothing selected). */
export async function selectedInterpreter(folder?: vscode.WorkspaceFolder): Promise<string | undefined> {
  const python = await api();
  if (python === undefined) {
    return undefined;
  }
  try {
    const active = python.environments.getActiveEnvironmentPath(folder?.uri);
    const resolved = await python.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the Python extension's selected interpreter changes. */
export async function onSelectedInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const python = await api();
  return python?.environments.onDidChangeActiveEnvironmentPath(() => listener());
}
