// TypeScript types of the ccproxy webview protocol, version 1.
//
// The contract is webview-protocol/SPEC.md; these types follow it, and a Go
// test compiles them (tsc --noEmit, strict) together with every example frame
// of webview-protocol/examples, so they cannot drift from the schemas.
//
// Frames are discriminated unions over `type`:
//   - RequestFrame<T>  client → proxy, carries an id, gets exactly one reply;
//   - PushFrame<T>     proxy → client, unsolicited;
//   - ReplyFrame<T>    the reply to a request of type T.
// Requests maps each request type to its data and its reply's data, so a
// client can type `request("session/create", {...})` end to end.

export const PROTOCOL_VERSION = "1";
/** The websocket subprotocol selecting version 1. */
export const SUBPROTOCOL = "ccproxy.v1";
/** Browsers authenticate by also offering `ccproxy.token.<token>`. */
export const TOKEN_SUBPROTOCOL_PREFIX = "ccproxy.token.";

/** A request id chosen by the client: a non-empty string or a safe integer. */
export type RequestId = string | number;

// ------------------------------------------------------------------ enums

export type SessionStateName = "starting" | "idle" | "running" | "restarting" | "exited" | "closed";
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions";
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
export type McpStatusValue =
  | "connected"
  | "failed"
  | "pending"
  | "needs-auth"
  | "disabled"
  | "awaiting-approval"
  | "rejected";
export type Scope = "user" | "local" | "project" | "managed" | "extra";
export type Approval = "approved" | "awaiting" | "rejected" | "not-needed";
export type Transport = "stdio" | "http" | "sse" | "ws";
export type ProbeCode =
  | "COMMAND_NOT_FOUND"
  | "SERVER_NOT_FOUND"
  | "TIMEOUT"
  | "CONNECTION_REFUSED"
  | "AUTH_REQUIRED"
  | "PROCESS_EXITED"
  | "PROTOCOL_ERROR"
  | "TRANSPORT_UNSUPPORTED"
  | "NOT_ACTIVE";

/** Error codes of version 1 (SPEC.md §10). More may be added: treat unknown codes like "internal". */
export const ERROR_CODES = [
  "bad_request",
  "unknown_type",
  "frame_too_large",
  "unauthorized",
  "forbidden_origin",
  "unsupported_protocol",
  "unknown_session",
  "session_exited",
  "not_found",
  "already_resolved",
  "limit_exceeded",
  "claude_unavailable",
  "cli_error",
  "timeout",
  "cancelled",
  "shutting_down",
  "internal",
  "mcp_server_not_found",
  "mcp_not_active",
  "mcp_tool_not_found",
  "mcp_invalid_arguments",
  "mcp_command_not_found",
  "mcp_timeout",
  "mcp_connection_refused",
  "mcp_auth_required",
  "mcp_process_exited",
  "mcp_protocol_error",
  "mcp_transport_unsupported",
  "mcp_server_exists",
] as const;
export type KnownErrorCode = (typeof ERROR_CODES)[number];
/** An error code; `string & {}` keeps editor completion for the known ones. */
export type ErrorCode = KnownErrorCode | (string & {});

/** Capabilities announced in hello (an open list). */
export type Capability =
  | "sessions"
  | "images"
  | "partial-messages"
  | "permissions"
  | "blobs"
  | "mcp.status"
  | "mcp.approval"
  | "mcp.probe"
  | "mcp.tools"
  | "mcp.call"
  | "mcp.log"
  | "history"
  | "mcp.manage"
  | "mcp.live"
  | "mcp.auth"
  | (string & {});

// ------------------------------------------------------------------ shared shapes

export interface FieldError {
  path: string;
  code?: string;
  message: string;
}

export interface ProtocolError {
  code: ErrorCode;
  message: string;
  details?: { fields?: FieldError[]; probeCode?: ProbeCode; stderrTail?: string };
}

export interface Software {
  name: string;
  version: string;
}

export interface McpRef {
  server: string;
  tool: string;
}

export interface McpServerInfo {
  name: string;
  version: string;
  title?: string;
}

/** Binary content taken out of a tool result by normalization (SPEC.md §7). */
export interface Attachment {
  /** image, audio, resource, document, …; render an unknown kind as a download. */
  kind: string;
  mediaType?: string;
  size: number;
  sha256: string;
  uri?: string;
  /** /v1/blobs/<sha256>, relative to the proxy's base URL. */
  url?: string;
  /** base64, when the proxy inlines attachments. */
  data?: string;
  error?: string;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

// ------------------------------------------------------------------ normalized events (SPEC.md §7)

export interface TextBlock {
  type: "text";
  text: string;
  [key: string]: unknown;
}
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  [key: string]: unknown;
}
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: JsonObject;
  mcp?: McpRef;
  [key: string]: unknown;
}
/** After normalization content is always a string. */
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: boolean;
  attachments?: Attachment[];
  mcp?: McpRef;
  [key: string]: unknown;
}
export interface OtherBlock {
  type: string;
  [key: string]: unknown;
}
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | OtherBlock;

export interface Message {
  role?: "user" | "assistant";
  content: string | ContentBlock[];
  [key: string]: unknown;
}

interface EventBase {
  session_id?: string;
  uuid?: string;
  parent_tool_use_id?: string | null;
  [key: string]: unknown;
}
export interface SystemEvent extends EventBase {
  type: "system";
  subtype: string;
}
export interface SystemInitEvent extends SystemEvent {
  subtype: "init";
  cwd?: string;
  model?: string;
  tools?: string[];
  mcp_servers?: { name: string; status: string; [key: string]: unknown }[];
  permissionMode?: string;
  claude_code_version?: string;
}
export interface AssistantEvent extends EventBase {
  type: "assistant";
  message: Message;
}
export interface UserEvent extends EventBase {
  type: "user";
  message: Message;
  tool_use_result?: unknown;
}
export interface ResultEvent extends EventBase {
  type: "result";
  subtype: string;
  is_error?: boolean;
  result?: string;
  duration_ms?: number;
  total_cost_usd?: number;
}
export interface StreamEvent extends EventBase {
  type: "stream_event";
  event: { type: string; [key: string]: unknown };
}
export interface OversizedLineEvent {
  type: "ccproxy";
  subtype: "oversized_line";
  bytes: number;
  limit?: number;
  preview: string;
  [key: string]: unknown;
}
export interface NoiseEvent {
  type: "ccproxy";
  subtype: "noise";
  text: string;
  truncated?: boolean;
  bytes?: number;
  [key: string]: unknown;
}
/** Any other event: unknown types pass through untouched. */
export interface OtherEvent {
  type: string;
  [key: string]: unknown;
}
/** The events a renderer usually handles. */
export type KnownEvent =
  | AssistantEvent
  | UserEvent
  | ResultEvent
  | StreamEvent
  | SystemEvent
  | OversizedLineEvent
  | NoiseEvent;
/** What session/event carries. Narrow it with isEvent / isSystemInit: a plain
 * `event.type === "assistant"` test cannot exclude OtherEvent. */
export type NormalizedEvent = KnownEvent | SystemInitEvent | OtherEvent;
export type EventOfType<T extends KnownEvent["type"]> = Extract<KnownEvent, { type: T }>;

/** Narrows an event by its type: isEvent(e, "assistant") gives an AssistantEvent. */
export function isEvent<T extends KnownEvent["type"]>(event: NormalizedEvent, type: T): event is EventOfType<T> {
  return event.type === type;
}

/** Narrows an event to system/init. */
export function isSystemInit(event: NormalizedEvent): event is SystemInitEvent {
  return event.type === "system" && event.subtype === "init";
}

/** The tool_result blocks of a user event (their content is text after normalization). */
export function toolResults(event: UserEvent): ToolResultBlock[] {
  const content = event.message.content;
  if (typeof content === "string") return [];
  return content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

// ------------------------------------------------------------------ request data and results

export interface SessionCreateData {
  cwd?: string;
  model?: string;
  permissionMode?: PermissionMode;
  resume?: string;
}
export interface SessionCreateResult {
  session: string;
  state?: SessionStateName;
  cwd?: string;
}
export interface ImageInput {
  mediaType: ImageMediaType;
  /** Standard base64, no data: prefix. */
  data: string;
}
export interface SessionSendData {
  session: string;
  text: string;
  images?: ImageInput[];
}
export interface SessionRef {
  session: string;
}
export interface SessionSubscribeData {
  session: string;
  afterSeq?: number;
}
export interface SessionSubscribeResult {
  session: string;
  state: SessionStateName;
  firstSeq: number;
  lastSeq: number;
}
export type EmptyData = Record<string, never>;
export interface SessionInfo {
  session: string;
  state: SessionStateName;
  cwd: string;
  model?: string;
  permissionMode?: PermissionMode;
  claudeSessionId?: string;
  createdAt: string;
  firstSeq: number;
  lastSeq: number;
  subscribers: number;
  pendingPermissions: number;
}
export interface SessionListResult {
  sessions: SessionInfo[];
}
export type PermissionRespondData =
  | {
      session: string;
      requestId: string;
      behavior: "allow";
      updatedInput?: JsonObject;
      /** allow this tool from now on (written to the project's .claude/settings.local.json) */
      always?: boolean;
    }
  | {
      session: string;
      requestId: string;
      behavior: "allow";
      /** a question: question text -> chosen label (", "-joined for multiSelect) or free text */
      answers: Record<string, string>;
      always?: boolean;
    }
  | { session: string; requestId: string; behavior: "deny"; message?: string };
export interface SessionSetPermissionModeData {
  session: string;
  mode: PermissionMode;
}
export interface SessionSetPermissionModeResult {
  mode: PermissionMode;
}
export interface McpNameData {
  name: string;
}
export interface McpApprovalResult {
  name: string;
  approval: Approval;
}
export interface McpProbeData {
  name?: string;
}
export interface ProbeResult {
  name: string;
  scope?: Scope;
  transport?: Transport;
  ok: boolean;
  status: Exclude<McpStatusValue, "pending">;
  error?: { code: ProbeCode; message: string; stderrTail?: string };
  serverInfo?: McpServerInfo;
  protocolVersion?: string;
  capabilities?: JsonObject;
  tools?: { name: string; title?: string; description?: string }[];
  toolCount: number;
  resources?: { uri: string; name: string; mimeType?: string; description?: string }[];
  prompts?: { name: string; description?: string }[];
  latencyMs: {
    total: number;
    connect?: number;
    initialize?: number;
    tools?: number;
    resources?: number;
    prompts?: number;
  };
  probedAt?: string;
}
export interface McpProbeResult {
  results: ProbeResult[];
}
export type ParameterType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null" | "any";
export interface Parameter {
  name: string;
  /** Where in the arguments: filters[].key ("[]" for array items). */
  path: string;
  type: ParameterType;
  description?: string;
  required: boolean;
  nullable?: boolean;
  default?: JsonValue;
  enum?: JsonValue[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  items?: Parameter;
  properties?: Parameter[];
  anyOf?: Parameter[];
  oneOf?: Parameter[];
  unsupported?: string;
}
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: JsonObject;
  parameters: Parameter[];
}
export interface McpToolsResult {
  server: string;
  tools: Tool[];
}
export interface McpCallData {
  name: string;
  tool: string;
  arguments: JsonObject;
}
export interface McpCallResult {
  server: string;
  tool: string;
  isError: boolean;
  content: string;
  attachments?: Attachment[];
  structuredContent?: JsonValue;
  durationMs: number;
}
/** Scopes mcp/add, mcp/update and mcp/remove write. */
export type WriteScope = "local" | "project" | "user";
/** mcp/add and mcp/update: a definition as a file holds it under mcpServers.NAME. */
export interface McpWriteData {
  name: string;
  scope?: WriteScope;
  definition: Record<string, unknown>;
}
export interface McpRemoveData {
  name: string;
  scope?: WriteScope;
}
export interface McpManageResult {
  name: string;
  scope: WriteScope;
  file: string;
  /** The resolved configuration afterwards (the data of mcp/config). */
  config: McpConfigData;
}
/** mcp/test: probe an unsaved definition (name defaults to "test"). */
export interface McpTestData {
  name?: string;
  definition: Record<string, unknown>;
}
/** mcp/toggle: enable or disable a server live (one session, or all). */
export interface McpToggleData {
  name: string;
  enabled: boolean;
  session?: string;
  /** Record it in ~/.claude.json (projects[dir].disabledMcpServers) and apply it through the configuration; no session. */
  persist?: boolean;
}
export interface McpReconnectData {
  name: string;
  session?: string;
}
/** What each live session answered to mcp/toggle or mcp/reconnect. */
export interface McpLiveResult {
  name: string;
  sessions: Array<{ session: string; ok: boolean; error?: ProtocolError }>;
}
/** mcp/login: a server of type http or sse in Claude Code's own configuration. */
export interface McpLoginData {
  name: string;
  /** Complete the running login of name with the address the browser was sent back to (browser on another machine). */
  redirect?: string;
}
export interface McpLogoutData {
  name: string;
}
/** The authorization URL `claude mcp login` printed: open it in a browser on ccproxy's machine. */
export interface McpLoginResult {
  name: string;
  /** Absent only when the CLI finished without printing one. */
  url?: string;
}
/** `claude mcp logout`'s message and each live session's answer to the reconnect. */
export interface McpLogoutResult {
  name: string;
  message?: string;
  sessions: Array<{ session: string; ok: boolean; error?: ProtocolError }>;
}
export interface McpLogData {
  server?: string;
  limit?: number;
}
export interface LogEntry {
  time: string;
  kind: "session" | "direct";
  session?: string;
  server: string;
  tool: string;
  toolUseId?: string;
  isError: boolean;
  durationMs?: number;
  resultBytes: number;
  input?: JsonValue;
  output?: string;
}
export interface McpLogResult {
  entries: LogEntry[];
}
/** history/list: one project (default the proxy's) or all of them; never both. */
export type HistoryListData =
  | { project?: string; all?: false; cursor?: string; limit?: number }
  | { project?: undefined; all: true; cursor?: string; limit?: number };
export interface HistorySession {
  /** What session/create's resume takes. */
  id: string;
  project: string;
  folder: string;
  title: string;
  titleFrom?: "summary" | "prompt";
  created: string;
  updated: string;
  messages: number;
  size: number;
  corrupt?: number;
  oversized?: number;
}
export interface HistoryListResult {
  sessions: HistorySession[];
  next?: string;
  total: number;
  skipped?: number;
}
export interface HistoryReadData {
  id: string;
  project?: string;
  agent?: string;
  /** A byte offset, in decimal: a page's next or a history_more event's cursor. */
  cursor?: string;
  limit?: number;
}
/** Says how to read on a subagent that did not fit in a history/read page. */
export interface HistoryMoreEvent {
  type: "ccproxy";
  subtype: "history_more";
  agent: string;
  parent_tool_use_id: string;
  cursor: string;
}
export interface HistoryEvent {
  offset: number;
  /** Normalized like session/event's event, or a HistoryMoreEvent. */
  event: NormalizedEvent;
}
export interface HistoryReadResult {
  id: string;
  agent?: string;
  events: HistoryEvent[];
  next: string;
  more: boolean;
  skipped: number;
  corrupt: number;
  oversized: number;
  truncated?: boolean;
}

/** Every client → proxy request: its data and the data of its success reply. */
export interface Requests {
  "session/create": { data: SessionCreateData; result: SessionCreateResult };
  "session/send": { data: SessionSendData; result: EmptyData };
  "session/subscribe": { data: SessionSubscribeData; result: SessionSubscribeResult };
  "session/unsubscribe": { data: SessionRef; result: EmptyData };
  "session/interrupt": { data: SessionRef; result: EmptyData };
  "session/close": { data: SessionRef; result: EmptyData };
  "session/list": { data: EmptyData; result: SessionListResult };
  "session/setPermissionMode": { data: SessionSetPermissionModeData; result: SessionSetPermissionModeResult };
  "permission/respond": { data: PermissionRespondData; result: EmptyData };
  "mcp/subscribe": { data: EmptyData; result: EmptyData };
  "mcp/unsubscribe": { data: EmptyData; result: EmptyData };
  "mcp/approve": { data: McpNameData; result: McpApprovalResult };
  "mcp/reject": { data: McpNameData; result: McpApprovalResult };
  "mcp/probe": { data: McpProbeData; result: McpProbeResult };
  "mcp/tools": { data: McpNameData; result: McpToolsResult };
  "mcp/call": { data: McpCallData; result: McpCallResult };
  "mcp/log": { data: McpLogData; result: McpLogResult };
  "history/list": { data: HistoryListData; result: HistoryListResult };
  "history/read": { data: HistoryReadData; result: HistoryReadResult };
  "mcp/add": { data: McpWriteData; result: McpManageResult };
  "mcp/update": { data: McpWriteData; result: McpManageResult };
  "mcp/remove": { data: McpRemoveData; result: McpManageResult };
  "mcp/test": { data: McpTestData; result: McpProbeResult };
  "mcp/toggle": { data: McpToggleData; result: McpLiveResult };
  "mcp/reconnect": { data: McpReconnectData; result: McpLiveResult };
  "mcp/login": { data: McpLoginData; result: McpLoginResult };
  "mcp/logout": { data: McpLogoutData; result: McpLogoutResult };
}
export type RequestType = keyof Requests;
export type RequestData<T extends RequestType> = Requests[T]["data"];
export type ResultData<T extends RequestType> = Requests[T]["result"];

// ------------------------------------------------------------------ push data

export interface HelloData {
  protocol: typeof PROTOCOL_VERSION;
  server: Software;
  claude?: Software;
  capabilities: Capability[];
  limits: {
    maxFrameBytes: number;
    sendQueueFrames: number;
    replayBytes: number;
    maxSessions?: number;
    maxImageBytes?: number;
    permissionTimeoutMs?: number;
  };
  connection?: string;
}
export interface SessionEventData {
  session: string;
  seq: number;
  event: NormalizedEvent;
}
export interface SessionStateData {
  session: string;
  state: SessionStateName;
  claudeSessionId?: string;
  reason?: string;
  permissionMode?: PermissionMode;
}
export interface SessionExitedData {
  session: string;
  /** null when a signal killed the process */
  code: number | null;
  /** null when the process exited by itself */
  signal: string | null;
  stderrTail: string;
  reason?: "closed" | "shutdown" | "exited";
}
export interface SessionGapData {
  session: string;
  firstSeq: number;
}
export type PermissionKind = "tool" | "question" | "plan";
export interface QuestionOption {
  label: string;
  description?: string;
}
export interface Question {
  question: string;
  header?: string;
  options: QuestionOption[];
  multiSelect?: boolean;
}
export interface PermissionRequestData {
  session: string;
  requestId: string;
  /** tool (default): allow/deny; question: AskUserQuestion (answer with answers); plan: ExitPlanMode (allow approves) */
  kind?: PermissionKind;
  toolName: string;
  input: JsonObject;
  mcp?: McpRef;
  toolUseId?: string;
  displayName?: string;
  suggestions?: JsonValue[];
  questions?: Question[];
  plan?: string;
  /** never set for a question or a plan */
  deadline?: string;
}
export interface PermissionResolvedData {
  session: string;
  requestId: string;
  behavior: "allow" | "deny" | "cancelled";
  reason?: "answered" | "timeout" | "cancelled" | "session_exited";
  message?: string;
}
export interface McpServerStatus {
  name: string;
  status: McpStatusValue;
  scope: Scope;
  approval: Approval;
  error?: string;
  errorCode?: ProbeCode;
  tools?: string[];
  toolCount?: number;
  transport?: Transport;
  serverInfo?: McpServerInfo;
  origin?: "config" | "session" | "probe";
  observedAt?: string;
}
/** The data of mcp/status, and the body of GET /v1/mcp/status. */
export interface McpStatusData {
  servers: McpServerStatus[];
  updatedAt?: string;
}
export interface McpConfigServer {
  name: string;
  scope: Scope;
  source?: string;
  type: Transport;
  active: boolean;
  approval: Approval;
  shadows?: { scope: Scope; source?: string }[];
  missingEnv?: string[];
  /** The definition with secrets masked. */
  config?: JsonObject;
}
/** The mcp/login push, to the connection that asked: url, then done or failed. */
export type McpLoginEventData =
  | { name: string; state: "url"; url: string }
  | { name: string; state: "done"; message?: string }
  | { name: string; state: "failed"; error: ProtocolError };
export interface McpConfigData {
  project?: string;
  servers: McpConfigServer[];
  errors?: { file: string; line?: number; column?: number; message: string }[];
  allowedTools?: string[];
}

/** Every proxy → client push (everything but reply). */
export interface Pushes {
  hello: HelloData;
  "session/event": SessionEventData;
  "session/state": SessionStateData;
  "session/exited": SessionExitedData;
  "session/gap": SessionGapData;
  "permission/request": PermissionRequestData;
  "permission/resolved": PermissionResolvedData;
  "mcp/status": McpStatusData;
  "mcp/config": McpConfigData;
  "mcp/login": McpLoginEventData;
}
export type PushType = keyof Pushes;

/** The body of an HTTP error response. */
export interface HttpError {
  error: ProtocolError;
}

// ------------------------------------------------------------------ frames

/** A client → proxy request; without a type argument, the union of all. */
export type RequestFrame<T extends RequestType = RequestType> = {
  [K in T]: { type: K; id: RequestId; data: Requests[K]["data"] };
}[T];

/** A proxy → client push; without a type argument, the union of all. */
export type PushFrame<T extends PushType = PushType> = {
  [K in T]: { type: K; data: Pushes[K] };
}[T];

export interface ErrorReply {
  type: "reply";
  /** null when the request's id could not be read. */
  id: RequestId | null;
  ok: false;
  error: ProtocolError;
}

/** The reply to a request of type T (any request when T is omitted). */
export type ReplyFrame<T extends RequestType = RequestType> =
  | { [K in T]: { type: "reply"; id: RequestId | null; ok: true; data: Requests[K]["result"] } }[T]
  | ErrorReply;

/** Anything the proxy sends. Narrow on `type` (and `ok` for replies). */
export type ServerFrame = PushFrame | ReplyFrame;
/** Anything a client sends. */
export type ClientFrame = RequestFrame;

/** Client → proxy message types, in SPEC order. */
export const REQUEST_TYPES = [
  "session/create",
  "session/send",
  "session/subscribe",
  "session/unsubscribe",
  "session/interrupt",
  "session/close",
  "session/list",
  "session/setPermissionMode",
  "permission/respond",
  "mcp/subscribe",
  "mcp/unsubscribe",
  "mcp/approve",
  "mcp/reject",
  "mcp/probe",
  "mcp/tools",
  "mcp/call",
  "mcp/log",
  "history/list",
  "history/read",
  "mcp/add",
  "mcp/update",
  "mcp/remove",
  "mcp/test",
  "mcp/toggle",
  "mcp/reconnect",
  "mcp/login",
  "mcp/logout",
] as const;

/** Proxy → client message types other than reply, in SPEC order. */
export const PUSH_TYPES = [
  "hello",
  "session/event",
  "session/state",
  "session/exited",
  "session/gap",
  "permission/request",
  "permission/resolved",
  "mcp/status",
  "mcp/config",
  "mcp/login",
] as const;

// Compile-time checks that the lists above and the maps agree exactly.
type Equals<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
export type RequestTypesAreComplete = Assert<Equals<(typeof REQUEST_TYPES)[number], RequestType>>;
export type PushTypesAreComplete = Assert<Equals<(typeof PUSH_TYPES)[number], PushType>>;

/** Reports whether a parsed frame is a push of type T. */
export function isPush<T extends PushType>(frame: ServerFrame, type: T): frame is Extract<ServerFrame, { type: T }> {
  return frame.type === type;
}

/** Reports whether a frame is a reply. */
export function isReply(frame: ServerFrame): frame is ReplyFrame {
  return frame.type === "reply";
}

/** The URL of an attachment's bytes, relative to the proxy's base URL, or undefined when it has none. */
export function blobURL(base: string, attachment: Attachment): string | undefined {
  if (attachment.url === undefined) return undefined;
  return new URL(attachment.url, base).toString();
}
