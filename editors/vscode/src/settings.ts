// The extension's settings (`scopelint.*`), read for a workspace folder, and the part of
// them the server takes as initialization options (scopelint/lsp/documents.py,
// ClientSettings: select, ignore, extendSelect, severity, configuration).
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";

export const SECTION = "scopelint";

export type ImportStrategy = "fromEnvironment" | "useBundled";

export interface Settings {
  enable: boolean;
  importStrategy: ImportStrategy;
  interpreter: string[];
  path: string[];
  select: string[] | null;
  extendSelect: string[];
  ignore: string[];
  severity: Record<string, string>;
  configuration: string | null;
}

/** `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~` expanded. */
export function expand(value: string, folder?: vscode.WorkspaceFolder): string {
  let out = value
    .replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? "")
    .replace(/\$\{userHome\}/g, os.homedir())
    .replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => process.env[name] ?? "");
  if (out === "~" || out.startsWith("~/")) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/** A path setting as an absolute path: relative ones are from the workspace folder. */
function absolute(value: string, folder?: vscode.WorkspaceFolder): string {
  const expanded = expand(value, folder);
  if (path.isAbsolute(expanded) || folder === undefined) {
    return expanded;
  }
  // A bare command name ("python3") stays one, to be looked up on PATH.
  return expanded.includes("/") || expanded.includes("\\") ? path.join(folder.uri.fsPath, expanded) : expanded;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

export function read(folder?: vscode.WorkspaceFolder): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
  const interpreter = strings(config.get("interpreter"));
  const select = config.get<unknown>("select");
  const severity = config.get<unknown>("severity");
  const configuration = config.get<unknown>("configuration");
  return {
    enable: config.get<boolean>("enable", true),
    importStrategy: config.get<string>("importStrategy") === "useBundled" ? "useBundled" : "fromEnvironment",
    // Only the interpreter itself is a path; what follows it are its arguments.
    interpreter: interpreter.length ? [absolute(interpreter[0], folder), ...interpreter.slice(1)] : [],
    path: strings(config.get("path")).map((p) => absolute(p, folder)),
    select: Array.isArray(select) ? strings(select) : null,
    extendSelect: strings(config.get("extendSelect")),
    ignore: strings(config.get("ignore")),
    severity: severity && typeof severity === "object" ? { ...(severity as Record<string, string>) } : {},
    configuration:
      typeof configuration === "string" && configuration.trim() ? absolute(configuration.trim(), folder) : null,
  };
}

/** What the server is told: only what the user set, so that an unset setting leaves the
 * project's pyproject.toml alone (an empty severity table would replace its table). */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (settings.select !== null) {
    options.select = settings.select;
  }
  if (settings.extendSelect.length) {
    options.extendSelect = settings.extendSelect;
  }
  if (settings.ignore.length) {
    options.ignore = settings.ignore;
  }
  if (Object.keys(settings.severity).length) {
    options.severity = settings.severity;
  }
  if (settings.configuration !== null) {
    options.configuration = settings.configuration;
  }
  return { scopelint: options };
}
