/// <reference types="node" />
/**
 * AXON v2 message types: agent-to-agent JSON envelopes. `decode` validates
 * (field types, kind, `v` >= 1, `ts` > 0, agent ids, the kind's payload
 * schema) and fills payload defaults; `encode` writes what upstream writes
 * (envelope fields in order, `ref` omitted when null, payload keys sorted).
 * Every failure throws `AxonError` whose `code` is the protocol's own error
 * code (`invalid_envelope`, `unknown_kind`, `incompatible_version`, ...).
 */
import { AxonError, PolywireError } from './errors'
export { AxonError, PolywireError }

export type Kind =
  | 'hello' | 'ping' | 'pong' | 'query' | 'response' | 'delegate' | 'ack'
  | 'result' | 'notify' | 'cancel' | 'discover' | 'capabilities' | 'error'
export type ErrorCode =
  | 'not_authorized' | 'unknown_domain' | 'overloaded' | 'internal' | 'timeout'
  | 'cancelled' | 'incompatible_version' | 'unknown_kind' | 'peer_not_found' | 'invalid_envelope'
export type StreamType = 'bidirectional' | 'unidirectional'
export type Route = 'open_bidirectional' | 'reply_on_request_stream' | 'open_unidirectional'
/** An agent id: `"ed25519."` + 32 hex characters. */
export type AgentId = string

export interface HelloPayload {
  /** Versions the sender speaks, ascending, e.g. `[1]`. */
  protocol_versions: number[]
  /** The responder's choice (only in the reply). */
  selected_version?: number | null
  agent_name?: string | null
  /** Optional kinds supported. Default `[]`. */
  features?: string[]
}
export type PingPayload = Record<string, never>
export interface PongPayload {
  status: 'idle' | 'busy' | 'overloaded'
  uptime_secs: number
  active_tasks: number
  agent_name?: string | null
}
export interface QueryPayload {
  question: string
  /** Dot-separated topic hint such as `family.calendar`. */
  domain?: string | null
  /** Token budget for the answer; 0 = no limit (the default). */
  max_tokens?: number | null
  /** How long the sender waits, in ms. Default 30000. */
  deadline_ms?: number | null
}
export interface ResponsePayload {
  data: unknown
  summary: string
  tokens_used?: number | null
  truncated?: boolean | null
}
export interface DelegatePayload {
  task: string
  context?: unknown
  /** Default `normal`. */
  priority?: 'normal' | 'urgent'
  /** Send a `result` when done? Default true. */
  report_back?: boolean
  deadline_ms?: number | null
}
export interface AckPayload {
  accepted: boolean
  estimated_ms?: number | null
}
export interface ResultPayload {
  status: 'completed' | 'failed' | 'partial'
  outcome: string
  data?: unknown
  error?: string | null
}
export interface NotifyPayload {
  topic: string
  data: unknown
  /** Default `low`. */
  importance?: 'low' | 'medium' | 'high'
}
export interface CancelPayload {
  reason?: string | null
}
export type DiscoverPayload = Record<string, never>
export interface CapabilitiesPayload {
  agent_name?: string | null
  domains?: string[]
  channels?: string[]
  tools?: string[]
  max_concurrent_tasks?: number | null
  model?: string | null
}
export interface ErrorPayload {
  code: ErrorCode
  /** What went wrong and what to try instead. */
  message: string
  /** Default false. */
  retryable?: boolean
}

export interface PayloadByKind {
  hello: HelloPayload
  ping: PingPayload
  pong: PongPayload
  query: QueryPayload
  response: ResponsePayload
  delegate: DelegatePayload
  ack: AckPayload
  result: ResultPayload
  notify: NotifyPayload
  cancel: CancelPayload
  discover: DiscoverPayload
  capabilities: CapabilitiesPayload
  error: ErrorPayload
}

export interface Envelope<K extends Kind = Kind> {
  v: number
  /** UUID v4, lowercase hyphenated. */
  id: string
  from: AgentId
  to: AgentId
  /** Unix time in milliseconds. */
  ts: number
  kind: K
  /** The id of the message this one answers, or null. */
  ref: string | null
  /** Unknown fields are kept (forward compatibility). */
  payload: PayloadByKind[K] & Record<string, unknown>
}
export type AnyEnvelope = { [K in Kind]: Envelope<K> }[Kind]

export interface KindRule {
  required: boolean
  expectsResponse: boolean
  responseKinds: Kind[]
  laterResponses: Kind[]
  stream: StreamType
  /** `[name, required]` pairs. */
  fields: [string, boolean][]
}

export declare const PROTOCOL_VERSION: 1
export declare const MAX_MESSAGE_SIZE: 65536
export declare const REPLAY_WINDOW_MS: 300000
export declare const DEFAULT_DEADLINE_MS: 30000
export declare const ERROR_CODES: readonly ErrorCode[]
export declare const KIND_RULES: Readonly<Record<Kind, KindRule>>
export declare const KINDS: readonly Kind[]
export declare const REQUIRED_KINDS: readonly Kind[]
export declare const OPTIONAL_KINDS: readonly Kind[]
export declare const PAYLOAD_DEFAULTS: Readonly<Partial<Record<Kind, Record<string, unknown>>>>

export declare function decode(data: Uint8Array | ArrayBuffer | string, options?: { fillDefaults?: boolean }): AnyEnvelope
export declare function encode(envelope: Envelope | Record<string, unknown>): Buffer
export declare function validate(envelope: Envelope | Record<string, unknown>, options?: { fillDefaults?: boolean }): AnyEnvelope
export declare function envelope<K extends Kind>(
  from: AgentId,
  to: AgentId,
  kind: K,
  payload: PayloadByKind[K] & Record<string, unknown>,
  options?: { ref?: string; id?: string; ts?: number | bigint },
): Envelope<K>
export declare function reply<K extends Kind>(
  request: Envelope,
  kind: K,
  payload: PayloadByKind[K] & Record<string, unknown>,
  options?: { id?: string; ts?: number | bigint },
): Envelope<K>
export declare function errorEnvelope(
  request: Envelope,
  code: ErrorCode,
  message: string,
  options?: { retryable?: boolean; id?: string; ts?: number | bigint },
): Envelope<'error'>
export declare function agentId(publicKey: Uint8Array | ArrayBuffer): AgentId
export declare function agentIdFromSeed(seed: Uint8Array | ArrayBuffer): AgentId
export declare function publicKeyFromSeed(seed: Uint8Array | ArrayBuffer): Buffer
export declare function isAgentId(s: unknown): boolean
export declare function sameAgent(a: string, b: string): boolean
export declare function negotiate(localVersions: Iterable<number>, remoteVersions: Iterable<number>): number

export interface Pending {
  id: string
  kind: Kind
  to: AgentId
  sentMs: number
  deadlineMs: number
  reportBack: boolean
  awaitingResult: boolean
}
export interface Outbound {
  bytes: Buffer
  route: Route
  envelope: AnyEnvelope
}
export type Inbound =
  | { action: 'deliver'; envelope: AnyEnvelope; inReplyTo: Pending | null }
  | { action: 'respond'; reply: AnyEnvelope; bytes: Buffer; delivered: AnyEnvelope | null }
  | {
      action: 'dropped'
      reason: 'malformed' | 'before_hello' | 'replay' | 'wrong_stream' | 'unknown_kind' | 'unexpected_reply'
      message: string
    }

export interface SessionOptions {
  protocolVersions?: number[]
  features?: string[]
  agentName?: string
  /** Accept a hello only from this agent. */
  expectedPeer?: AgentId
  replayWindowMs?: number
  replayCapacity?: number
}

export declare class Session {
  constructor(localId: AgentId, options?: SessionOptions)
  hello(to: AgentId, nowMs?: number): Outbound
  send(envelope: Envelope, nowMs?: number): Outbound
  receive(data: Uint8Array | ArrayBuffer | string, stream: StreamType, nowMs?: number): Inbound
  expire(nowMs?: number): Pending[]
  forget(id: string): Pending | null
  readonly localId: AgentId
  readonly ready: boolean
  readonly peer: AgentId | null
  readonly version: number | null
  readonly peerFeatures: string[] | null
  readonly pending: Pending[]
}
