// TypeScript types of the ccproxy webview protocol, version 1.
//
// The contract is protocol/SPEC.md. The data types are generated
// from the Go types through the JSON Schemas into protocol.gen.ts (go
// generate ./protocol) and re-exported here; this file holds what a
// generator cannot express: frames, the Requests/Pushes maps, normalized
// events, unions between fields, constants and helpers. A Go test compiles
// both (tsc --noEmit, strict) with every example frame of
// protocol/examples, and another fails when protocol.gen.ts is stale.
//
// Frames are discriminated unions over `type`:
//   - RequestFrame<T>  client → proxy, carries an id, gets exactly one reply;
//   - PushFrame<T>     proxy → client, unsolicited;
//   - ReplyFrame<T>    the reply to a request of type T.
// Requests maps each request type to its data and its reply's data, so a
// client can type `request("session/create", {...})` end to end.

// The data types are generated from the Go types (protocol.gen.ts); the
// types here are what a generator cannot express.
// Only the names used below are imported; all are re-exported next.
import type {
  Attachment,
  HelloData,
  HistorySearchData,
  HistorySearchResult,
  HistoryListResult,
  HistoryReadData,
  HistoryReadResult,
  HistoryRenameData,
  HistoryRenameResult,
  HistoryDeleteData,
  HistoryDeleteResult,
  HistoryRestoreData,
  HistoryRestoreResult,
  HistoryTrashResult,
  HistoryExportData,
  HistoryExportResult,
  McpApprovalResult,
  McpCallData,
  McpCallResult,
  McpConfigData,
  McpLiveResult,
  McpLogData,
  McpLogResult,
  McpManageResult,
  McpNameData,
  McpProbeData,
  McpProbeResult,
  McpReconnectData,
  McpRef,
  McpRemoveData,
  McpStatusData,
  McpTestData,
  McpToggleData,
  McpLoginData,
  McpLoginResult,
  McpLogoutData,
  McpLogoutResult,
  McpTrustResult,
  McpToolsResult,
  McpWriteData,
  PermissionRequestData,
  PermissionResolvedData,
  ProtocolError,
  SessionCreateData,
  SessionCreateResult,
  SessionEventData,
  SessionExitedData,
  SessionGapData,
  SessionListResult,
  SessionRef,
  SessionSendData,
  SessionSetModelData,
  SessionSetModelResult,
  SessionSetPermissionModeData,
  SessionSetPermissionModeResult,
  SessionStateData,
  SessionSubscribeData,
  SessionSubscribeResult,
  SessionCommandsData,
  SessionFilesData,
  SessionFilesResult,
  FileEntry,
  SessionRewindData,
  SessionRewindResult,
} from "./protocol.gen.js";
export type {
  Approval,
  Attachment,
  FieldError,
  HelloData,
  HistoryEvent,
  HistoryListResult,
  HistoryReadData,
  HistoryReadResult,
  HistorySession,
  HistoryProject,
  HistoryRenameData,
  HistoryRenameResult,
  HistoryDeleteData,
  HistoryDeleteResult,
  HistoryRestoreData,
  HistoryRestoreResult,
  HistoryTrashEntry,
  HistoryTrashResult,
  HistoryExportData,
  HistoryExportResult,
  HistorySearchData,
  HistorySearchHit,
  HistorySearchMatch,
  HistorySearchResult,
  HistorySearchSpan,
  SearchRole,
  HttpError,
  ImageInput,
  ImageMediaType,
  LogEntry,
  McpApprovalResult,
  McpCallData,
  McpCallResult,
  McpConfigData,
  McpConfigServer,
  McpLiveResult,
  McpLogData,
  McpLogResult,
  McpManageResult,
  McpNameData,
  McpProbeData,
  McpProbeResult,
  McpReconnectData,
  McpRef,
  McpRemoveData,
  McpServerInfo,
  McpServerStatus,
  McpStatusData,
  McpStatusValue,
  McpTestData,
  McpToggleData,
  McpLoginData,
  McpLoginResult,
  McpLogoutData,
  McpLogoutResult,
  McpTrustResult,
  McpToolsResult,
  McpWriteData,
  ModelInfo,
  Parameter,
  ParameterType,
  PermissionKind,
  PermissionMode,
  PermissionRequestData,
  PermissionResolvedData,
  ProbeCode,
  ProbeResult,
  ProtocolError,
  Question,
  QuestionOption,
  Scope,
  SessionCreateData,
  SessionCreateResult,
  SessionEventData,
  SessionExitedData,
  SessionGapData,
  SessionInfo,
  SessionListResult,
  SessionRef,
  SessionSendData,
  SessionSetModelData,
  SessionSetModelResult,
  SessionSetPermissionModeData,
  SessionSetPermissionModeResult,
  SessionStateData,
  SessionStateName,
  SessionSubscribeData,
  SessionSubscribeResult,
  Software,
  Tool,
  Transport,
  WriteScope,
  SessionCommandsData,
  SlashCommand,
  SessionFilesData,
  SessionFilesResult,
  FileEntry,
} from "./protocol.gen.js";
export type {
  ExitReason,
  LogKind,
  McpStatusOrigin,
  ProbeStatus,
  ResolvedBehavior,
  ResolvedReason,
  RespondBehavior,
  TitleFrom,
} from "./protocol.gen.js";
export type { SessionRewindData, SessionRewindResult, SessionUsage, TokenUsage } from "./protocol.gen.js";

export const PROTOCOL_VERSION = "1";
/** The websocket subprotocol selecting version 1. */
export const SUBPROTOCOL = "ccproxy.v1";
/** Browsers authenticate by also offering `ccproxy.token.<token>`. */
export const TOKEN_SUBPROTOCOL_PREFIX = "ccproxy.token.";

/** A request id chosen by the client: a non-empty string or a safe integer. */
export type RequestId = string | number;

// ------------------------------------------------------------------ error codes, capabilities

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
  "conflict",
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
  | "files"
  | "history.manage"
  | "history.search"
  | (string & {});

// ------------------------------------------------------------------ JSON values

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

// ------------------------------------------------------------------ what the generated types cannot say

export type EmptyData = Record<string, never>;
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
/** history/list: one project (default the proxy's) or all of them; never both. */
export type HistoryListData =
  | { project?: string; all?: false; cursor?: string; limit?: number }
  | { project?: undefined; all: true; cursor?: string; limit?: number };
/** Says how to read on a subagent that did not fit in a history/read page. */
export interface HistoryMoreEvent {
  type: "ccproxy";
  subtype: "history_more";
  agent: string;
  parent_tool_use_id: string;
  cursor: string;
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
  "session/setModel": { data: SessionSetModelData; result: SessionSetModelResult };
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
  "mcp/trust": { data: EmptyData; result: McpTrustResult };
  "mcp/login": { data: McpLoginData; result: McpLoginResult };
  "mcp/logout": { data: McpLogoutData; result: McpLogoutResult };
  "session/files": { data: SessionFilesData; result: SessionFilesResult };
  "history/rename": { data: HistoryRenameData; result: HistoryRenameResult };
  "history/delete": { data: HistoryDeleteData; result: HistoryDeleteResult };
  "history/restore": { data: HistoryRestoreData; result: HistoryRestoreResult };
  "history/trash": { data: EmptyData; result: HistoryTrashResult };
  "history/export": { data: HistoryExportData; result: HistoryExportResult };
  "session/rewind": { data: SessionRewindData; result: SessionRewindResult };
  "history/search": { data: HistorySearchData; result: HistorySearchResult };
}
export type RequestType = keyof Requests;
export type RequestData<T extends RequestType> = Requests[T]["data"];
export type ResultData<T extends RequestType> = Requests[T]["result"];

/** The mcp/login push, to the connection that asked: url, then done or failed. */
export type McpLoginEventData =
  | { name: string; state: "url"; url: string }
  | { name: string; state: "done"; message?: string }
  | { name: string; state: "failed"; error: ProtocolError };
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
  "session/commands": SessionCommandsData;
}
export type PushType = keyof Pushes;

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
  "session/setModel",
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
  "mcp/trust",
  "mcp/login",
  "mcp/logout",
  "session/files",
  "history/rename",
  "history/delete",
  "history/restore",
  "history/trash",
  "history/export",
  "session/rewind",
  "history/search",
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
  "session/commands",
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
