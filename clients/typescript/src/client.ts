/**
 * `SkillsdClient`: JSON-RPC 2.0 over newline-delimited JSON to a `skillsd serve` child process
 * (stdio) or to a socket daemon (`skillsd serve --socket PATH`).
 */

import { type ChildProcess, spawn as spawnProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync, statSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

import {
  ErrorCodes,
  type AgentsGetParams,
  type AgentsGetResult,
  type AgentsListParams,
  type AgentsListResult,
  type AgentsMatrix,
  type AgentsMatrixParams,
  type CheckParams,
  type CheckResult,
  type DoctorParams,
  type DoctorReport,
  type Empty,
  type ErrorDataByKind,
  type InitializeParams,
  type InitializeResult,
  type InstallParams,
  type InstallResult,
  type InstalledParams,
  type InstalledResult,
  type RemoveParams,
  type RemoveResult,
  type RestoreParams,
  type RestoreResult,
  type ScanParams,
  type ScanResult,
  type UpdateParams,
  type UpdateResult,
  type InspectParams,
  type InspectResult,
  type ListParams,
  type ListResult,
  type LoadParams,
  type LoadResult,
  type MentionsParams,
  type MentionsResult,
  type MethodName,
  type Methods,
  type NotificationName,
  type Notifications,
  type ProgressParams,
  type ProgressValue,
  type PromptParams,
  type PromptResult,
  type ReadFileParams,
  type ReadFileResult,
  type RememberParams,
  type SearchParams,
  type SearchResult,
  type SuggestParams,
  type SuggestResult,
  type CommandsParams,
  type CommandsResult,
  type InvokeParams,
  type InvokeResult,
  type SessionCloseParams,
  type SessionCompactedParams,
  type SessionCompactedResult,
  type SessionOpenParams,
  type SessionOpenResult,
  type SetEnabledParams,
  type SetEnabledResult,
  type SkillsChangedParams,
  type ToolsCallParams,
  type ToolsCallResult,
  type ToolsListParams,
  type ToolsListResult,
  type UnloadParams,
  type UnloadResult,
  type ValidateParams,
  type ValidateResult,
} from "./protocol.js";

/** Who this client says it is in `initialize` (kept equal to package.json by a test). */
export const CLIENT_INFO = { name: "@skillsd/client", version: "0.1.0" } as const;

/**
 * Codes of errors the client makes up itself (the daemon never sends them). The value mirrors
 * vscode-jsonrpc's "pending response rejected", so hosts that already map that code do the
 * right thing.
 */
export const ClientErrorCodes = {
  CONNECTION_CLOSED: -32097,
} as const;

/** `SkillsdError.kind` values for errors raised by the client rather than the daemon. */
export const ClientErrorKinds = {
  /** The request's `timeoutMs` passed; `$/cancelRequest` was sent. */
  timeout: "timeout",
  /** The request's `signal` aborted; `$/cancelRequest` was sent if it had been written. */
  cancelled: "cancelled",
  /** The daemon exited, the socket closed, or the client was disposed before an answer. */
  connection_closed: "connection_closed",
  /** The socket could not be connected to. */
  connection_failed: "connection_failed",
} as const;

/** An error answer from the daemon, or a request the client gave up on. */
export class SkillsdError extends Error {
  /** JSON-RPC error code (`ErrorCodes`, or `ClientErrorCodes` for client-side failures). */
  readonly code: number;
  /** `error.data` as sent (client-side errors carry their own, always with `kind`). */
  readonly data: unknown;
  /** `data.kind` (`ErrorKinds` keys, `ClientErrorKinds` values), if any. */
  readonly kind: string | undefined;
  /** The request method this error answers. */
  readonly method: string | undefined;

  constructor(code: number, message: string, data?: unknown, method?: string) {
    super(message);
    this.name = "SkillsdError";
    this.code = code;
    this.data = data;
    this.method = method;
    const kind = isRecord(data) ? data["kind"] : undefined;
    this.kind = typeof kind === "string" ? kind : undefined;
  }

  /** Whether this is a `kind` error; narrows `data` to that kind's members. */
  is<K extends keyof ErrorDataByKind>(kind: K): this is SkillsdError & { kind: K; data: ErrorDataByKind[K] } {
    return this.kind === kind;
  }

  /** The error of a JSON-RPC error response (tolerant of a malformed `error` member). */
  static fromResponse(error: unknown, method?: string): SkillsdError {
    if (!isRecord(error)) {
      return new SkillsdError(
        ErrorCodes.INTERNAL_ERROR,
        `malformed error: ${JSON.stringify(error)}`,
        undefined,
        method,
      );
    }
    const code = typeof error["code"] === "number" ? error["code"] : ErrorCodes.INTERNAL_ERROR;
    const message = typeof error["message"] === "string" ? error["message"] : "unknown error";
    return new SkillsdError(code, message, error["data"], method);
  }
}

/** Per-request options. */
export interface RequestOptions {
  /** Give up after this many milliseconds: send `$/cancelRequest`, reject with kind `timeout`.
   * Overrides the client's `defaultTimeoutMs`; `0` means no timeout. */
  timeoutMs?: number;
  /** Aborting it cancels the request (kind `cancelled`). */
  signal?: AbortSignal;
  /** Receives the daemon's `$/progress` reports for this request (sets `_meta.progressToken`). */
  onProgress?: (value: ProgressValue) => void;
}

/** Options shared by `spawn` and `connect`. */
export interface ClientOptions {
  /** Timeout for requests that do not pass `timeoutMs` (default: none). */
  defaultTimeoutMs?: number;
  /** How many trailing stderr lines to keep for error messages (default 50). */
  stderrLines?: number;
  /** Largest message accepted from the daemon; a longer one closes the connection (default 64 MiB). */
  maxMessageBytes?: number;
  /** How long `close()` waits for an orderly end before forcing it (default 3000 ms; spawned
   * daemons get SIGTERM, then SIGKILL 2 s later; sockets are destroyed). */
  closeTimeoutMs?: number;
}

/** How to start the daemon. */
export interface SpawnOptions extends ClientOptions {
  /** Executable (default: `defaultServeCommand().command`). */
  command?: string;
  /** Arguments (default: `defaultServeCommand().args` with the default command, else `[]`). */
  args?: string[];
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The child's working directory: the default `cwd` of every request. */
  cwd?: string;
}

/** How a connection ended. */
export interface CloseInfo {
  /** The process's exit status (spawned daemons only). */
  exitCode: number | null;
  /** The signal that ended the process (spawned daemons only). */
  signal: NodeJS.Signals | null;
  /** What went wrong, when it was not an orderly exit or close. */
  error?: Error;
}

/** Something to undo a registration with (the VS Code shape). */
export interface Disposable {
  dispose(): void;
}

/** The events a `SkillsdClient` emits. */
export interface SkillsdClientEvents {
  /** Every notification from the daemon. */
  notification: [method: string, params: unknown];
  "skills.changed": [params: SkillsChangedParams];
  "$/progress": [params: ProgressParams];
  /** One line the daemon wrote to stderr (its logs). */
  stderr: [line: string];
  /** A message that is not valid JSON-RPC; the connection carries on. */
  protocolError: [error: Error];
  /** The connection ended; all pending requests have been rejected. */
  close: [info: CloseInfo];
}

/** Params the daemon accepts with every method. */
type MetaParams = { _meta?: { progressToken?: string | number | null } | null };

/** A method's params may be left out when none of them is required. */
type RequestArgs<M extends MethodName> = {} extends Methods[M]["params"]
  ? [params?: Methods[M]["params"], options?: RequestOptions]
  : [params: Methods[M]["params"], options?: RequestOptions];

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: SkillsdError): void;
  cleanup(): void;
}

interface Transport {
  readonly input: Readable;
  readonly output: Writable;
  /** Ask the peer to finish: it answers what is in flight, then closes. */
  end(): void;
  /** Make it stop: SIGTERM for a process, destroy for a socket. */
  terminate(): void;
  /** Stop at once. */
  destroy(): void;
  /** For error messages: "skillsd (pid 42, /usr/bin/python3)", "skillsd socket /run/s.sock". */
  readonly label: string;
}

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The command that starts a stdio daemon when `spawn` is not told one:
 * `$SKILLSD_PYTHON -m skillsd serve`, else the skillsd repository's `.venv/bin/python -m skillsd
 * serve` (this package living in `clients/typescript`), else `skillsd serve` from `PATH`.
 */
export function defaultServeCommand(env: NodeJS.ProcessEnv = process.env): {
  command: string;
  args: string[];
} {
  const python = env["SKILLSD_PYTHON"];
  if (python) return { command: python, args: ["-m", "skillsd", "serve"] };
  const venv = join(PACKAGE_DIR, "..", "..", ".venv", "bin", "python");
  if (existsSync(venv)) return { command: venv, args: ["-m", "skillsd", "serve"] };
  return { command: "skillsd", args: ["serve"] };
}

/**
 * A connection to skillsd. Create one with `SkillsdClient.spawn()` or `SkillsdClient.connect()`;
 * end it with `close()` (orderly) or `dispose()` (at once).
 */
export class SkillsdClient extends EventEmitter<SkillsdClientEvents> implements Disposable {
  /** The daemon process, for spawned clients. */
  readonly process: ChildProcess | undefined;
  /** Resolves once the connection has ended. */
  readonly closed: Promise<CloseInfo>;
  /** The `initialize` result, once `initialize()` has run. */
  serverInfo: InitializeResult | undefined;

  private readonly transport: Transport;
  private readonly pending = new Map<number, Pending>();
  private readonly progressHandlers = new Map<string, (value: ProgressValue) => void>();
  private readonly stderrTail: string[] = [];
  private readonly stderrLimit: number;
  private readonly maxMessageBytes: number;
  private readonly defaultTimeoutMs: number;
  private readonly closeTimeoutMs: number;
  private nextId = 1;
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private closeInfo: CloseInfo | undefined;
  private disposing = false;
  /** Set once nothing more may be read: a fatal protocol error or the end. */
  private dead = false;
  private resolveClosed!: (info: CloseInfo) => void;

  private constructor(transport: Transport, options: ClientOptions, child?: ChildProcess) {
    super();
    this.transport = transport;
    this.process = child;
    this.stderrLimit = Math.max(0, options.stderrLines ?? 50);
    this.maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 0;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 3000;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    transport.input.on("data", (chunk: Buffer) => this.receive(chunk));
    // A write after the peer went away fails with EPIPE; the close path reports it.
    transport.output.on("error", () => {});
  }

  /** Start `skillsd serve` (or `options.command`) and talk to it over its stdin/stdout. */
  static spawn(options: SpawnOptions = {}): SkillsdClient {
    const env = options.env ?? process.env;
    let command = options.command;
    let args = options.args ?? [];
    if (command === undefined) {
      const fallback = defaultServeCommand(env);
      command = fallback.command;
      args = options.args ?? fallback.args;
    }
    const child = spawnProcess(command, args, {
      cwd: options.cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const label = () => `skillsd (${child.pid ? `pid ${child.pid}, ` : ""}${command})`;
    const transport: Transport = {
      input: child.stdout!,
      output: child.stdin!,
      end: () => child.stdin!.end(),
      terminate: () => void child.kill("SIGTERM"),
      destroy: () => {
        child.stdin!.destroy();
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      },
      get label() {
        return label();
      },
    };
    const client = new SkillsdClient(transport, options, child);
    client.captureStderr(child.stderr!);
    child.on("error", (error) => {
      // Spawning failed (no such command...): there will be no exit status.
      if (child.pid === undefined) client.finish({ exitCode: null, signal: null, error });
    });
    child.once("close", (exitCode, signal) => client.finish({ exitCode, signal }));
    return client;
  }

  /**
   * Connect to a socket daemon (`skillsd serve --socket PATH`). A socket another user owns is
   * refused before connecting: that user's server would see (and answer) every request.
   */
  static connect(socketPath: string, options: ClientOptions = {}): Promise<SkillsdClient> {
    const refusal = foreignSocketRefusal(socketPath);
    if (refusal) return Promise.reject(refusal);
    return new Promise((resolvePromise, rejectPromise) => {
      const socket: Socket = createConnection(socketPath);
      const failed = (error: Error) => {
        rejectPromise(
          new SkillsdError(
            ClientErrorCodes.CONNECTION_CLOSED,
            `could not connect to skillsd at ${socketPath}: ${error.message}`,
            { kind: ClientErrorKinds.connection_failed, path: socketPath },
          ),
        );
      };
      socket.once("error", failed);
      socket.once("connect", () => {
        socket.off("error", failed);
        const transport: Transport = {
          input: socket,
          output: socket,
          end: () => socket.end(),
          terminate: () => socket.destroy(),
          destroy: () => socket.destroy(),
          label: `skillsd socket ${socketPath}`,
        };
        const client = new SkillsdClient(transport, options);
        let lastError: Error | undefined;
        socket.on("error", (error) => {
          lastError = error;
        });
        socket.once("close", () =>
          client.finish(
            lastError ? { exitCode: null, signal: null, error: lastError } : { exitCode: null, signal: null },
          ),
        );
        resolvePromise(client);
      });
    });
  }

  /** Whether the connection has ended. */
  get isClosed(): boolean {
    return this.closeInfo !== undefined;
  }

  /** The last lines the daemon wrote to stderr (spawned clients), oldest first. */
  get stderr(): readonly string[] {
    return [...this.stderrTail];
  }

  /** Send a typed request; resolves with its result or rejects with a `SkillsdError`. */
  request<M extends MethodName>(method: M, ...args: RequestArgs<M>): Promise<Methods[M]["result"]> {
    const [params, options] = args;
    return this.call(method, params, options) as Promise<Methods[M]["result"]>;
  }

  /** Send a request to a method outside the typed table (extensions, test hooks). */
  call(method: string, params?: unknown, options: RequestOptions = {}): Promise<unknown> {
    if (this.closeInfo) return Promise.reject(this.closedError(method));
    if (this.disposing) return Promise.reject(this.closedError(method, "the client was disposed"));
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(cancelledError(method));
    const id = this.nextId++;
    params = withAbsoluteCwd(params);
    let token: string | undefined;
    if (onProgress) {
      token = `${CLIENT_INFO.name}#${id}`;
      const base = (isRecord(params) ? params : {}) as MetaParams;
      params = { ...base, _meta: { ...(base._meta ?? {}), progressToken: token } };
      this.progressHandlers.set(token, onProgress);
    }
    return new Promise((resolvePromise, rejectPromise) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => this.abandon(id, cancelledError(method));
      const pending: Pending = {
        method,
        resolve: resolvePromise,
        reject: rejectPromise,
        cleanup: () => {
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          if (token !== undefined) this.progressHandlers.delete(token);
        },
      };
      this.pending.set(id, pending);
      const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.abandon(
            id,
            new SkillsdError(
              ErrorCodes.REQUEST_CANCELLED,
              `${method}: no answer from skillsd within ${timeoutMs} ms (request cancelled)`,
              { kind: ClientErrorKinds.timeout, timeoutMs },
              method,
            ),
          );
        }, timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      const message: Record<string, unknown> = { jsonrpc: "2.0", id, method };
      if (params !== undefined) message["params"] = params;
      this.write(message);
    });
  }

  /** Send a typed notification. */
  notify<N extends NotificationName>(method: N, params: Notifications[N]["params"]): void;
  /** Send a notification outside the typed table. */
  notify(method: string, params?: unknown): void;
  notify(method: string, params?: unknown): void {
    if (this.closeInfo) return;
    const message: Record<string, unknown> = { jsonrpc: "2.0", method };
    if (params !== undefined) message["params"] = params;
    this.write(message);
  }

  /** Call `handler` for each `method` notification (typed for the protocol's notifications). */
  onNotification<N extends NotificationName>(
    method: N,
    handler: (params: Notifications[N]["params"]) => void,
  ): Disposable;
  onNotification(method: string, handler: (params: unknown) => void): Disposable;
  onNotification(method: string, handler: (params: never) => void): Disposable {
    const listener = (name: string, params: unknown) => {
      if (name === method) (handler as (params: unknown) => void)(params);
    };
    this.on("notification", listener);
    return { dispose: () => void this.off("notification", listener) };
  }

  // -- convenience methods: one per protocol method ----------------------------------------

  /** `initialize`, then the `initialized` notification. `processId` defaults to this process,
   * so a daemon (stdio) or this connection (socket) does not outlive the editor. */
  async initialize(params: InitializeParams = {}, options?: RequestOptions): Promise<InitializeResult> {
    const result = await this.request(
      "initialize",
      { processId: process.pid, clientInfo: { ...CLIENT_INFO }, ...params },
      options,
    );
    this.serverInfo = result;
    this.notify("initialized", {});
    return result;
  }

  ping(options?: RequestOptions): Promise<Empty> {
    return this.request("ping", {}, options);
  }

  listSkills(params?: ListParams, options?: RequestOptions): Promise<ListResult> {
    return this.request("skills.list", params ?? {}, options);
  }

  search(params: SearchParams, options?: RequestOptions): Promise<SearchResult> {
    return this.request("skills.search", params, options);
  }

  /** The skills that fit a user's request, each with a 0..1 score and whether it activates. */
  suggest(params: SuggestParams, options?: RequestOptions): Promise<SuggestResult> {
    return this.request("skills.suggest", params, options);
  }

  /** Slash commands: user-invocable skills and `.claude/commands` files (docs/protocol.md). */
  commands(params?: CommandsParams, options?: RequestOptions): Promise<CommandsResult> {
    return this.request("skills.commands", params ?? {}, options);
  }

  /** Run what the user typed (`{command: "/name args"}`) or a ref with `arguments`. */
  invoke(params: InvokeParams, options?: RequestOptions): Promise<InvokeResult> {
    return this.request("skills.invoke", params, options);
  }

  load(params: LoadParams, options?: RequestOptions): Promise<LoadResult> {
    return this.request("skills.load", params, options);
  }

  unload(params: UnloadParams, options?: RequestOptions): Promise<UnloadResult> {
    return this.request("skills.unload", params, options);
  }

  readFile(params: ReadFileParams, options?: RequestOptions): Promise<ReadFileResult> {
    return this.request("skills.readFile", params, options);
  }

  validate(params: ValidateParams, options?: RequestOptions): Promise<ValidateResult> {
    return this.request("skills.validate", params, options);
  }

  setEnabled(params: SetEnabledParams, options?: RequestOptions): Promise<SetEnabledResult> {
    return this.request("skills.setEnabled", params, options);
  }

  prompt(params?: PromptParams, options?: RequestOptions): Promise<PromptResult> {
    return this.request("skills.prompt", params ?? {}, options);
  }

  mentions(params: MentionsParams, options?: RequestOptions): Promise<MentionsResult> {
    return this.request("skills.mentions", params, options);
  }

  listTools(params?: ToolsListParams, options?: RequestOptions): Promise<ToolsListResult> {
    return this.request("tools.list", params ?? {}, options);
  }

  callTool(params: ToolsCallParams, options?: RequestOptions): Promise<ToolsCallResult> {
    return this.request("tools.call", params, options);
  }

  openSession(params?: SessionOpenParams, options?: RequestOptions): Promise<SessionOpenResult> {
    return this.request("session.open", params ?? {}, options);
  }

  closeSession(params: SessionCloseParams, options?: RequestOptions): Promise<Empty> {
    return this.request("session.close", params, options);
  }

  sessionCompacted(
    params: SessionCompactedParams,
    options?: RequestOptions,
  ): Promise<SessionCompactedResult> {
    return this.request("session.compacted", params, options);
  }

  inspect(params?: InspectParams, options?: RequestOptions): Promise<InspectResult> {
    return this.request("context.inspect", params ?? {}, options);
  }

  checkPermission(params: CheckParams, options?: RequestOptions): Promise<CheckResult> {
    return this.request("permissions.check", params, options);
  }

  rememberPermission(params: RememberParams, options?: RequestOptions): Promise<Empty> {
    return this.request("permissions.remember", params, options);
  }

  listPersonas(params?: AgentsListParams, options?: RequestOptions): Promise<AgentsListResult> {
    return this.request("personas.list", params ?? {}, options);
  }

  getPersona(params: AgentsGetParams, options?: RequestOptions): Promise<AgentsGetResult> {
    return this.request("personas.get", params, options);
  }

  /** @deprecated `agents.list` is the old name of `personas.list`: use {@link listPersonas}. */
  listAgents(params?: AgentsListParams, options?: RequestOptions): Promise<AgentsListResult> {
    return this.request("agents.list", params ?? {}, options);
  }

  /** @deprecated `agents.get` is the old name of `personas.get`: use {@link getPersona}. */
  getAgent(params: AgentsGetParams, options?: RequestOptions): Promise<AgentsGetResult> {
    return this.request("agents.get", params, options);
  }

  // -- diagnosis --------------------------------------------------------------------------

  /** What `skillsd doctor --json` prints: what skillsd sees in a cwd, and why. */
  doctorReport(params?: DoctorParams, options?: RequestOptions): Promise<DoctorReport> {
    return this.request("doctor.report", params ?? {}, options);
  }

  /** Which coding agent finds which skill (`skillsd doctor --agents --json`). */
  agentsMatrix(params?: AgentsMatrixParams, options?: RequestOptions): Promise<AgentsMatrix> {
    return this.request("agents.matrix", params ?? {}, options);
  }

  // -- installing skills (docs/install-skills.md) ------------------------------------------

  install(params: InstallParams, options?: RequestOptions): Promise<InstallResult> {
    return this.request("skills.install", params, options);
  }

  installed(params?: InstalledParams, options?: RequestOptions): Promise<InstalledResult> {
    return this.request("skills.installed", params ?? {}, options);
  }

  update(params?: UpdateParams, options?: RequestOptions): Promise<UpdateResult> {
    return this.request("skills.update", params ?? {}, options);
  }

  remove(params: RemoveParams, options?: RequestOptions): Promise<RemoveResult> {
    return this.request("skills.remove", params, options);
  }

  restore(params?: RestoreParams, options?: RequestOptions): Promise<RestoreResult> {
    return this.request("skills.restore", params ?? {}, options);
  }

  scan(params: ScanParams, options?: RequestOptions): Promise<ScanResult> {
    return this.request("skills.scan", params, options);
  }

  // -- ending ---------------------------------------------------------------------------

  /**
   * End the connection in order: the daemon answers what is in flight, then closes (a spawned
   * daemon exits). Forced after `closeTimeoutMs`.
   */
  async close(): Promise<CloseInfo> {
    if (this.closeInfo) return this.closeInfo;
    this.transport.end();
    const term = setTimeout(() => this.transport.terminate(), this.closeTimeoutMs);
    const kill = setTimeout(() => this.transport.destroy(), this.closeTimeoutMs + 2000);
    try {
      return await this.closed;
    } finally {
      clearTimeout(term);
      clearTimeout(kill);
    }
  }

  /** End the connection now: pending requests are rejected, the daemon is told to stop. */
  dispose(): void {
    if (this.closeInfo || this.disposing) return;
    this.disposing = true;
    // Cancel what the daemon is still working on so its EOF exit does not wait for it.
    for (const id of this.pending.keys()) this.notify("$/cancelRequest", { id });
    this.rejectAll((method) => this.closedError(method, "the client was disposed"));
    this.transport.end();
    const child = this.process;
    if (child) {
      // Give the daemon its orderly EOF exit; make sure it goes even if it hangs.
      const timer = setTimeout(() => this.transport.destroy(), this.closeTimeoutMs);
      timer.unref();
      void this.closed.then(() => clearTimeout(timer));
    } else {
      this.transport.destroy();
    }
  }

  // -- internals ------------------------------------------------------------------------

  private write(message: unknown): void {
    const line = JSON.stringify(message) + "\n";
    try {
      this.transport.output.write(line);
    } catch {
      // The stream is already destroyed: the close event rejects the pending requests.
    }
  }

  /** Give up on request `id` locally and tell the daemon to stop working on it. */
  private abandon(id: number, error: SkillsdError): void {
    const pending = this.take(id);
    if (!pending) return;
    this.notify("$/cancelRequest", { id });
    pending.reject(error);
  }

  private take(id: unknown): Pending | undefined {
    if (typeof id !== "number") return undefined;
    const pending = this.pending.get(id);
    if (pending) {
      this.pending.delete(id);
      pending.cleanup();
    }
    return pending;
  }

  private receive(chunk: Buffer): void {
    if (this.dead) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      let line = chunk.subarray(start, nl);
      if (this.chunks.length) {
        line = Buffer.concat([...this.chunks, line]);
        this.chunks = [];
        this.chunkBytes = 0;
      }
      start = nl + 1;
      if (this.dead) return;
      this.line(line);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.chunks.push(rest);
      this.chunkBytes += rest.length;
      if (this.chunkBytes > this.maxMessageBytes) {
        this.chunks = [];
        this.chunkBytes = 0;
        this.fail(
          new Error(`a message from ${this.transport.label} is longer than ${this.maxMessageBytes} bytes`),
        );
      }
    }
  }

  private line(raw: Buffer): void {
    const end = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.length - 1 : raw.length;
    if (end === 0) return;
    if (end > this.maxMessageBytes) {
      this.fail(
        new Error(`a message from ${this.transport.label} is longer than ${this.maxMessageBytes} bytes`),
      );
      return;
    }
    const text = raw.toString("utf8", 0, end);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      this.emit(
        "protocolError",
        new Error(`not JSON from ${this.transport.label}: ${text.slice(0, 200)}`, { cause: error }),
      );
      return;
    }
    if (Array.isArray(message)) {
      for (const item of message) this.dispatch(item);
    } else {
      this.dispatch(message);
    }
  }

  private dispatch(message: unknown): void {
    if (!isRecord(message)) {
      this.emit("protocolError", new Error(`not a JSON-RPC message: ${JSON.stringify(message)}`));
      return;
    }
    const method = message["method"];
    if (typeof method === "string") {
      if ("id" in message) {
        // The daemon sends no requests today; answer as JSON-RPC requires rather than hang it.
        this.write({
          jsonrpc: "2.0",
          id: message["id"],
          error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `Method not found: ${method}` },
        });
        return;
      }
      this.notification(method, message["params"]);
      return;
    }
    if (!("id" in message) || (!("result" in message) && !("error" in message))) {
      this.emit(
        "protocolError",
        new Error(`not a JSON-RPC message: ${JSON.stringify(message).slice(0, 200)}`),
      );
      return;
    }
    const pending = this.take(message["id"]);
    if (!pending) {
      // Late answers to requests given up on (timeout, abort) are expected; others are not.
      if (message["id"] === null) {
        this.emit("protocolError", SkillsdError.fromResponse(message["error"]));
      }
      return;
    }
    if ("error" in message) pending.reject(SkillsdError.fromResponse(message["error"], pending.method));
    else pending.resolve(message["result"]);
  }

  private notification(method: string, params: unknown): void {
    if (method === "$/progress" && isRecord(params)) {
      const handler = this.progressHandlers.get(String(params["token"]));
      if (handler && isRecord(params["value"])) handler(params["value"] as unknown as ProgressValue);
      this.emit("$/progress", params as unknown as ProgressParams);
    } else if (method === "skills.changed") {
      this.emit("skills.changed", params as SkillsChangedParams);
    }
    this.emit("notification", method, params);
  }

  private captureStderr(stream: Readable): void {
    stream.setEncoding("utf8");
    let partial = "";
    const keep = (line: string) => {
      if (this.stderrLimit > 0) {
        this.stderrTail.push(line);
        if (this.stderrTail.length > this.stderrLimit) this.stderrTail.shift();
      }
      this.emit("stderr", line);
    };
    stream.on("data", (text: string) => {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) keep(line.replace(/\r$/, ""));
    });
    stream.on("end", () => {
      if (partial) keep(partial);
      partial = "";
    });
  }

  /** A fatal protocol failure: drop the connection. */
  private fail(error: Error): void {
    this.dead = true;
    this.emit("protocolError", error);
    this.rejectAll((method) => this.closedError(method, error.message));
    this.transport.destroy();
  }

  private finish(info: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = info;
    this.dead = true;
    this.rejectAll((method) => this.closedError(method));
    this.progressHandlers.clear();
    this.resolveClosed(info);
    this.emit("close", info);
  }

  private rejectAll(makeError: (method: string) => SkillsdError): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const pending of all) {
      pending.cleanup();
      pending.reject(makeError(pending.method));
    }
  }

  private closedError(method: string, reason?: string): SkillsdError {
    const info = this.closeInfo;
    let why = reason;
    if (why === undefined) {
      if (!info) why = "the connection is closing";
      else if (info.error) why = `${this.transport.label} failed: ${info.error.message}`;
      else if (info.signal) why = `${this.transport.label} was killed by ${info.signal}`;
      else if (info.exitCode !== null) why = `${this.transport.label} exited with status ${info.exitCode}`;
      else why = `${this.transport.label} closed the connection`;
    }
    const stderr = this.stderr.slice(-20);
    const tail = stderr.length ? `\nlast stderr lines:\n${stderr.map((l) => `  ${l}`).join("\n")}` : "";
    return new SkillsdError(
      ClientErrorCodes.CONNECTION_CLOSED,
      `${method}: no answer: ${why}${tail}`,
      {
        kind: ClientErrorKinds.connection_closed,
        exitCode: info?.exitCode ?? null,
        signal: info?.signal ?? null,
        stderr,
      },
      method,
    );
  }
}

function cancelledError(method: string): SkillsdError {
  return new SkillsdError(
    ErrorCodes.REQUEST_CANCELLED,
    `${method}: request cancelled`,
    { kind: ClientErrorKinds.cancelled },
    method,
  );
}

/**
 * `params` with a relative `cwd` made absolute from this process's working directory: a
 * shared daemon runs in a directory of its own, so `cwd: "."` must mean the caller's.
 */
function withAbsoluteCwd(params: unknown): unknown {
  if (!isRecord(params) || typeof params.cwd !== "string" || isAbsolute(params.cwd)) return params;
  return { ...params, cwd: resolve(params.cwd) };
}

/**
 * Why `socketPath` must not be trusted, if it is owned by another user than this process.
 *
 * skillsd's Python client and `skillsd proxy` ask the kernel who the server is (SO_PEERCRED)
 * after connecting; Node's `net.Socket` exposes no peer credentials, so this client checks who
 * owns the socket file instead. The daemon creates its socket 0600 as itself, so the owner is
 * the server's user unless a root process replaced the file in between. A path that cannot be
 * statted (missing) is left to the connection attempt to report.
 */
function foreignSocketRefusal(socketPath: string): SkillsdError | undefined {
  if (typeof process.geteuid !== "function") return undefined; // Windows: no uids to compare
  let ownerUid: number;
  try {
    ownerUid = statSync(socketPath).uid;
  } catch {
    return undefined;
  }
  const ownUid = process.geteuid();
  if (ownerUid === ownUid) return undefined;
  return new SkillsdError(
    ClientErrorCodes.CONNECTION_CLOSED,
    `refusing the daemon at ${socketPath}: its socket is owned by uid ${ownerUid}, not by you ` +
      `(uid ${ownUid}); another user may have started it there`,
    { kind: ClientErrorKinds.connection_failed, path: socketPath, ownerUid },
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
