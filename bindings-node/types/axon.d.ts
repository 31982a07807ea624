/// <reference types="node" />
/**
 * AXON v2 message types: agent-to-agent JSON envelopes. `decode` validates
 * (field types, kind, `v` >= 1, `ts` > 0, agent ids, the kind's payload
 * schema) and fills payload defaults; `encode` writes what upstream writes
 * (envelope fields in order, `ref` omitted when null, payload keys sorted).
 * Every failure throws `AxonError` whose `code` is the protocol's own error
 * code (`invalid_envelope`, `unknown_kind`, `incompatible_version`, ...); an
 * argument of the wrong type (bytes, a boolean option such as `fillDefaults`
 * or `retryable`, a time) is a `TypeError` with code `invalid_envelope`,
 * `instanceof PolywireError`.
 */
import { AxonError, PolywireError } from './errors'
export { AxonError, PolywireError }
// The client of a local upstream daemon: see axon_daemon.d.ts.
export {
  DAEMON_ERROR_CODES, DAEMON_MAX_COMMAND_SIZE, DaemonClient, AxonDaemonError, DaemonInvalidCommandError,
  DaemonCommandTooLargeError, DaemonPeerNotFoundError, DaemonSelfSendError, DaemonPeerUnreachableError,
  DaemonTimeoutError, DaemonInternalError, DaemonUnavailableError, DaemonDisconnectedError, DaemonClosedError,
  DaemonReplyTimeoutError, DaemonProtocolError,
} from './axon_daemon'
export type {
  DaemonErrorCode, DaemonEnvelope, DaemonPeer, DaemonStatus, DaemonIdentity, InboundEvent, PairRequestEvent,
  DaemonEvent, DaemonConnectOptions, DaemonSendOptions,
} from './axon_daemon'

/** A message kind (the envelope's `kind`): the 13 of `KINDS`. */
export type Kind =
  | 'hello' | 'ping' | 'pong' | 'query' | 'response' | 'delegate' | 'ack'
  | 'result' | 'notify' | 'cancel' | 'discover' | 'capabilities' | 'error'
/** A protocol error code (an `error` payload's `code`, `AxonError.code`): the 10 of `ERROR_CODES`. */
export type ErrorCode =
  | 'not_authorized' | 'unknown_domain' | 'overloaded' | 'internal' | 'timeout'
  | 'cancelled' | 'incompatible_version' | 'unknown_kind' | 'peer_not_found' | 'invalid_envelope'
/** The type of QUIC stream a message travels on (`Session.receive`'s `stream`). */
export type StreamType = 'bidirectional' | 'unidirectional'
/**
 * Where to write an outbound message: a new bidirectional stream (a request;
 * read the reply from it), the stream the request came in on (a reply; then
 * finish it), or a new unidirectional stream (a message that expects no reply).
 */
export type Route = 'open_bidirectional' | 'reply_on_request_stream' | 'open_unidirectional'
/** An agent id: `"ed25519."` + 32 hex characters. */
export type AgentId = string

/** The payload of a `hello` (request, and reply with `selected_version`). */
export interface HelloPayload {
  /** Versions the sender speaks, ascending, e.g. `[1]`. */
  protocol_versions: number[]
  /** The responder's choice (only in the reply). */
  selected_version?: number | null
  agent_name?: string | null
  /** Optional kinds supported. Default `[]`. */
  features?: string[]
}
/** The payload of a `ping`: `{}`. */
export type PingPayload = Record<string, never>
/** The payload of a `pong` (the answer to a `ping`). */
export interface PongPayload {
  status: 'idle' | 'busy' | 'overloaded'
  uptime_secs: number
  active_tasks: number
  agent_name?: string | null
}
/** The payload of a `query` (answered with `response` or `error`). */
export interface QueryPayload {
  question: string
  /** Dot-separated topic hint such as `family.calendar`. */
  domain?: string | null
  /** Token budget for the answer; 0 = no limit (the default). */
  max_tokens?: number | null
  /** How long the sender waits, in ms. Default 30000. */
  deadline_ms?: number | null
}
/** The payload of a `response` (the answer to a `query`). */
export interface ResponsePayload {
  data: unknown
  summary: string
  tokens_used?: number | null
  truncated?: boolean | null
}
/** The payload of a `delegate` (acknowledged with `ack`, reported with `result`). */
export interface DelegatePayload {
  task: string
  context?: unknown
  /** Default `normal`. */
  priority?: 'normal' | 'urgent'
  /** Send a `result` when done? Default true. */
  report_back?: boolean
  deadline_ms?: number | null
}
/** The payload of an `ack` (the answer to a `delegate` or `cancel`). */
export interface AckPayload {
  accepted: boolean
  estimated_ms?: number | null
}
/** The payload of a `result` (a delegated task's outcome). */
export interface ResultPayload {
  status: 'completed' | 'failed' | 'partial'
  outcome: string
  data?: unknown
  error?: string | null
}
/** The payload of a `notify` (no reply). */
export interface NotifyPayload {
  topic: string
  data: unknown
  /** Default `low`. */
  importance?: 'low' | 'medium' | 'high'
}
/** The payload of a `cancel` (answered with `ack`). */
export interface CancelPayload {
  reason?: string | null
}
/** The payload of a `discover`: `{}`. */
export type DiscoverPayload = Record<string, never>
/** The payload of `capabilities` (the answer to `discover`). */
export interface CapabilitiesPayload {
  agent_name?: string | null
  domains?: string[]
  channels?: string[]
  tools?: string[]
  max_concurrent_tasks?: number | null
  model?: string | null
}
/** The payload of an `error` (`errorEnvelope`). */
export interface ErrorPayload {
  /** The protocol error code. */
  code: ErrorCode
  /** What went wrong and what to try instead. */
  message: string
  /** Default false. */
  retryable?: boolean
}

/** The payload type of each kind. */
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

/** A message of kind `K`, with the wire's field names. */
export interface Envelope<K extends Kind = Kind> {
  /** The protocol version (1 or more). */
  v: number
  /** UUID v4, lowercase hyphenated. */
  id: string
  /** The sender's agent id. */
  from: AgentId
  /** The recipient's agent id. */
  to: AgentId
  /** Unix time in milliseconds. */
  ts: number
  /** The message kind. */
  kind: K
  /** The id of the message this one answers, or null. */
  ref: string | null
  /** Unknown fields are kept (forward compatibility). */
  payload: PayloadByKind[K] & Record<string, unknown>
}
/** An envelope of any kind, discriminated by `kind` (what `decode` returns). */
export type AnyEnvelope = { [K in Kind]: Envelope<K> }[Kind]

/** The rules of a kind (a value of `KIND_RULES`). */
export interface KindRule {
  /** Whether every agent must support it (else it is a hello feature). */
  required: boolean
  /** Whether it is a request (sent on a bidirectional stream, answered there). */
  expectsResponse: boolean
  /** The kinds that answer it on its stream. */
  responseKinds: Kind[]
  /** Kinds that answer it later, as new messages (a delegate's `result`). */
  laterResponses: Kind[]
  /** The stream type it travels on. */
  stream: StreamType
  /** `[name, required]` pairs. */
  fields: [string, boolean][]
}

/** The protocol version this module speaks and offers in hello by default. */
export declare const PROTOCOL_VERSION: 1
/** The largest message body `decode` accepts, in bytes. */
export declare const MAX_MESSAGE_SIZE: 65536
/** How long (ms) a `Session` remembers a received id to drop replays. */
export declare const REPLAY_WINDOW_MS: 300000
/** A request's deadline (ms) when its payload gives no `deadline_ms`. */
export declare const DEFAULT_DEADLINE_MS: 30000
/** The 10 protocol error codes (frozen). */
export declare const ERROR_CODES: readonly ErrorCode[]
/** The rules of each kind (deeply frozen). */
export declare const KIND_RULES: Readonly<Record<Kind, KindRule>>
/** The 13 message kinds, in the protocol's order (frozen). */
export declare const KINDS: readonly Kind[]
/** The kinds every agent must support: hello, ping, pong, query, response, notify, error. */
export declare const REQUIRED_KINDS: readonly Kind[]
/**
 * The kinds an agent lists in its hello `features` when it supports them:
 * delegate, ack, result, cancel, discover, capabilities.
 */
export declare const OPTIONAL_KINDS: readonly Kind[]
/**
 * Per kind, the payload fields `decode` and `validate` fill in when absent
 * and their values (`{query: {max_tokens: 0, deadline_ms: 30000}, ...}`; deeply frozen).
 */
export declare const PAYLOAD_DEFAULTS: Readonly<Partial<Record<Kind, Record<string, unknown>>>>

/**
 * Decode and validate one message body (bytes, or a string taken as its
 * UTF-8 text; at most 65,536 bytes): ids lowercase, `ref` null when absent,
 * payload defaults filled unless `{fillDefaults: false}`. Throws `AxonError`
 * with the protocol's code.
 */
export declare function decode(data: Uint8Array | ArrayBuffer | string, options?: { fillDefaults?: boolean }): AnyEnvelope
/**
 * Validate an envelope (payload as given) and encode it as upstream writes
 * it. Throws `AxonError` (`invalid_envelope`, `unknown_kind`, ...); a value
 * JSON cannot hold (a cycle, a BigInt) is `invalid_envelope` too.
 */
export declare function encode(envelope: Envelope | Record<string, unknown>): Buffer
/** Validate an envelope; its normalized form (ids lowercase, `ref` null when absent, defaults filled unless `{fillDefaults: false}`). */
export declare function validate(envelope: Envelope | Record<string, unknown>, options?: { fillDefaults?: boolean }): AnyEnvelope
/**
 * A new message: v 1, a fresh UUID v4 id and the current time unless
 * `options.id`/`options.ts` are given; `options.ref` sets `ref`. Validated:
 * throws `AxonError` (`invalid_envelope` for a bad agent id or payload,
 * `unknown_kind`).
 */
export declare function envelope<K extends Kind>(
  from: AgentId,
  to: AgentId,
  kind: K,
  payload: PayloadByKind[K] & Record<string, unknown>,
  options?: { ref?: string; id?: string; ts?: number | bigint },
): Envelope<K>
/**
 * A reply to `request`: `ref` = the request's id, from/to swapped, the
 * request's `v`, a fresh id and time (unless given). The kind must answer
 * the request's kind (a ping is answered with pong or error, ...), else
 * `AxonError` `invalid_envelope`.
 */
export declare function reply<K extends Kind>(
  request: Envelope,
  kind: K,
  payload: PayloadByKind[K] & Record<string, unknown>,
  options?: { id?: string; ts?: number | bigint },
): Envelope<K>
/**
 * An `error` reply to `request` with `code`, `message` and `retryable`
 * (default false). Make `message` instructive: what went wrong and what to
 * try instead. An unknown code throws `AxonError` `invalid_envelope`.
 */
export declare function errorEnvelope(
  request: Envelope,
  code: ErrorCode,
  message: string,
  options?: { retryable?: boolean; id?: string; ts?: number | bigint },
): Envelope<'error'>
/**
 * `"ed25519." + hex(sha256(publicKey)[:16])` for a 32-byte Ed25519 public
 * key; another length throws `AxonError` `invalid_envelope`.
 */
export declare function agentId(publicKey: Uint8Array | ArrayBuffer): AgentId
/** The agent id of the key pair with this 32-byte private seed (another length: `invalid_envelope`). */
export declare function agentIdFromSeed(seed: Uint8Array | ArrayBuffer): AgentId
/**
 * The 32-byte Ed25519 public key of the key pair whose 32-byte private seed
 * is `seed`. Another length throws `AxonError` `invalid_envelope`.
 */
export declare function publicKeyFromSeed(seed: Uint8Array | ArrayBuffer): Buffer
/**
 * Whether `s` is an agent id: `"ed25519."` and 32 hex digits (either case).
 * False for anything that is no string (never throws).
 */
export declare function isAgentId(s: unknown): boolean
/**
 * Whether two agent ids name the same agent, compared as the protocol does
 * (hex digits case-insensitively); false unless both are agent ids.
 */
export declare function sameAgent(a: string, b: string): boolean
/**
 * The highest version both sides speak (integers 0 to 255; 0 never
 * matches); `AxonError` `incompatible_version` when there is none.
 */
export declare function negotiate(localVersions: Iterable<number>, remoteVersions: Iterable<number>): number

/** A request a `Session` sent and still expects an answer to. */
export interface Pending {
  /** The request's id. */
  id: string
  /** The request's kind. */
  kind: Kind
  /** The agent it was sent to; only that agent's replies match it. */
  to: AgentId
  /** When it was sent (the `nowMs` of `send`). */
  sentMs: number
  /** How long to wait (the payload's `deadline_ms`, else 30000). */
  deadlineMs: number
  /** For a delegate: whether it asked for a `result`. */
  reportBack: boolean
  /** A delegate that was acknowledged and awaits its `result` (it no longer expires: `forget` it when giving up). */
  awaitingResult: boolean
}
/** What `Session.hello` and `Session.send` return: the message and where to write it. */
export interface Outbound {
  /** The encoded message body. */
  bytes: Buffer
  /** Where to write it. */
  route: Route
  /** The message, as sent. */
  envelope: AnyEnvelope
}
/**
 * What `Session.receive` says to do with a message: `deliver` it to the
 * application (a reply with the request it answers, `inReplyTo`), `respond`
 * with `reply` (already encoded: `bytes`) on the same stream (`delivered`:
 * the received message when the application should see it too, an accepted
 * hello), or ignore it (`dropped`, with the reason).
 */
export type Inbound =
  | { action: 'deliver'; envelope: AnyEnvelope; inReplyTo: Pending | null }
  | { action: 'respond'; reply: AnyEnvelope; bytes: Buffer; delivered: AnyEnvelope | null }
  | {
      action: 'dropped'
      reason: 'malformed' | 'before_hello' | 'replay' | 'wrong_stream' | 'unknown_kind' | 'unexpected_reply'
      message: string
    }

/** Options of `new Session(localId, options)`. */
export interface SessionOptions {
  /** Versions offered in hello, ascending (integers 1 to 255). Default `[1]`. */
  protocolVersions?: number[]
  /** The optional kinds announced in hello. Default: all six (`OPTIONAL_KINDS`). */
  features?: string[]
  /** The name announced in hello. */
  agentName?: string
  /** Accept a hello only from this agent. */
  expectedPeer?: AgentId
  /** How long (ms) a received id is remembered to drop replays. Default 300000. */
  replayWindowMs?: number
  /** Most ids remembered for replay detection. Default 100000. */
  replayCapacity?: number
}

/**
 * A sans-IO AXON connection endpoint: "nothing before hello completes"
 * (unidirectional messages dropped, bidirectional requests answered
 * `not_authorized`), replies matched to requests by `ref`, ids seen in the
 * last 300 s dropped as replays. Pass `nowMs` (ms, a non-negative integer;
 * default: now) for a deterministic clock.
 */
export declare class Session {
  /**
   * `localId`: this agent's id. A bad id throws `AxonError`
   * `invalid_envelope`; no protocol versions, or a 0, `incompatible_version`.
   */
  constructor(localId: AgentId, options?: SessionOptions)
  /**
   * Start the handshake with agent `to`: `{bytes, route, envelope}` of the
   * hello to send (route `open_bidirectional`). A bad id throws `invalid_envelope`.
   */
  hello(to: AgentId, nowMs?: number): Outbound
  /**
   * Check and encode a message to send: `{bytes, route, envelope}`; a
   * request is remembered (`pending`) to match its reply. Throws `AxonError`:
   * `not_authorized` before hello completes, `peer_not_found` to another
   * agent than the peer, `unknown_kind` for an optional request the peer did
   * not announce, `invalid_envelope` (not from the local agent, a reply of
   * the wrong kind, ...).
   */
  send(envelope: Envelope, nowMs?: number): Outbound
  /**
   * Process a received body; `stream` is `'bidirectional'` (a reply read from
   * a stream this side opened too) or `'unidirectional'`. Never throws for
   * the message: a bad one is answered or dropped (see `Inbound`); a bad
   * `stream` throws `invalid_envelope`.
   */
  receive(data: Uint8Array | ArrayBuffer | string, stream: StreamType, nowMs?: number): Inbound
  /**
   * Forget and return the requests whose deadline has passed, oldest first
   * (answer them locally with a `timeout`).
   */
  expire(nowMs?: number): Pending[]
  /** Stop waiting for the answer to a request; returns it, or null. */
  forget(id: string): Pending | null
  /** This side's agent id (lowercase). */
  readonly localId: AgentId
  /** Whether the hello exchange has completed (messages other than hello may flow). */
  readonly ready: boolean
  /** The peer's agent id, once the hello exchange has completed (else null). */
  readonly peer: AgentId | null
  /** The protocol version negotiated in the hello exchange, or null before it. */
  readonly version: number | null
  /** The features the peer announced in its hello, or null before it. */
  readonly peerFeatures: string[] | null
  /** Requests sent and not yet answered, oldest first. */
  readonly pending: Pending[]
}

/** An axon/1 envelope: `id` (a UUID v4), `kind`, `ref` (the request it answers, or null) and `payload`. */
export interface Envelope1 {
  id: string
  kind: string
  ref: string | null
  payload: Record<string, unknown>
}

/** Options of `axon1.message`. */
export interface Axon1MessageOptions {
  /** Any kind but `request`; `message` by default. */
  kind?: string
  ref?: string | null
  id?: string | null
}

/**
 * The envelopes of today's protocol, AXON protocol version 1 (upstream v0.3.0
 * and later): `{id, kind, ref?, payload}` on connections with ALPN `axon/1`.
 * `decode` accepts exactly what upstream HEAD's `decode` and `validate` accept
 * (UUIDs in any spelling upstream reads, unknown fields and `from`/`to`
 * ignored) and keeps an unknown kind as its string; every failure throws
 * `AxonError` `invalid_envelope` with upstream's message.
 */
export interface Axon1 {
  /** `'axon/1'`, the ALPN protocol id. */
  readonly ALPN: 'axon/1'
  /** 65536: the largest message, in bytes. */
  readonly MAX_MESSAGE_SIZE: number
  /** The kinds upstream knows: request, response, message, error. */
  readonly KINDS: readonly string[]
  /** Decode and validate one message as upstream HEAD does. */
  decode(data: Uint8Array | ArrayBuffer | string): Envelope1
  /** Validate an envelope and encode it for the wire (`{"id","kind","ref"?,"payload"}`). */
  encode(envelope: Envelope1 | Record<string, unknown>): Buffer
  /** A `request` with a fresh UUID v4 id (or `options.id`). */
  request(payload: Record<string, unknown>, options?: { id?: string | null }): Envelope1
  /** A message (any kind but `request`) with a fresh id. */
  message(payload: Record<string, unknown>, options?: Axon1MessageOptions): Envelope1
  /** A `response` to `request`: `ref` = its id, a fresh id. */
  response(request: Envelope1 | Record<string, unknown>, payload: Record<string, unknown>, options?: { id?: string | null }): Envelope1
  /** An `error` reply to `request`: payload `{code, message, retryable}` in that order. */
  error(
    request: Envelope1 | Record<string, unknown>,
    code: string,
    message: string,
    options?: { retryable?: boolean; id?: string | null },
  ): Envelope1
}
/** `require('polywire/axon').axon1`: the axon/1 codec. */
export declare const axon1: Axon1

/** The protocol generations a `Peer` speaks: `'axon/1'` (default) and `'v2'`. */
export declare const PROTOCOLS: readonly ['axon/1', 'v2']

/** The longest `busyPoll` window `Peer.start` accepts: 0.001 seconds (longer spins would
 * hold back the peer's own timers). */
export declare const MAX_BUSY_POLL: 0.001

/** An operation of a `Peer` failed; `code` is stable (`AXON_TIMEOUT`, ...). */
export declare class AxonPeerError extends AxonError {}
/**
 * The peer answered with an `error`: `remoteCode`, `message` (also
 * `remoteMessage`) and `retryable` are the reply's; `code` is
 * `AXON_REMOTE_ERROR`. Throw `new AxonRemoteError(code, message, { retryable })`
 * from a served handler to reply with that error.
 */
export declare class AxonRemoteError extends AxonPeerError {
  constructor(code?: string, message?: string, options?: { retryable?: boolean })
  readonly remoteCode: string
  readonly remoteMessage: string
  readonly retryable: boolean
}
/** No reply within the request's timeout (`AXON_TIMEOUT`). */
export declare class AxonTimeoutError extends AxonPeerError {}
/** The TLS handshake (or v2's hello) was refused: a key not pinned on either side, another ALPN or protocol generation (`AXON_HANDSHAKE_REFUSED`). */
export declare class AxonHandshakeError extends AxonPeerError {}
/** The peer could not be reached in time (`AXON_UNREACHABLE`). */
export declare class AxonUnreachableError extends AxonPeerError {}
/** No peer with that agent id is known: `addPeer` it first (`AXON_UNKNOWN_PEER`). */
export declare class AxonUnknownPeerError extends AxonPeerError {}
/** The reply was not a valid answer to the request: a wrong `ref` or kind, an invalid envelope, none at all (`AXON_INVALID_REPLY`). */
export declare class AxonInvalidReplyError extends AxonPeerError {}
/** A message over 65,536 bytes (`AXON_MESSAGE_TOO_LARGE`). */
export declare class AxonMessageTooLargeError extends AxonPeerError {}
/** The connection closed before the reply (`AXON_CONNECTION_LOST`). */
export declare class AxonConnectionLostError extends AxonPeerError {}
/** The peer is closed, or closed while the operation was in flight (`AXON_CLOSED`). */
export declare class AxonClosedError extends AxonPeerError {}
/** The peer could not start: the address could not be bound, ... (`AXON_START_FAILED`). */
export declare class AxonStartError extends AxonPeerError {}
/** An argument's value is not valid: a malformed token or key, an unknown protocol, ... (`AXON_INVALID_ARGUMENT`). */
export declare class AxonInvalidArgumentError extends AxonPeerError {}

/** A peer to pin, as upstream's config lists one. */
export interface PeerObject {
  /** Its agent id (checked against the key). */
  agentId?: string
  /** Its Ed25519 public key, standard base64. */
  pubkey: string
  /** `ip:port` or `host:port`; without it, it must dial this peer. */
  addr?: string
}

/** Options of `Peer.start`. */
export interface PeerOptions {
  /** A 32-byte Ed25519 seed, the path of an upstream `identity.key`, or null for a new identity. */
  identity?: Uint8Array | ArrayBuffer | string | null
  /** The UDP `ip:port` to listen on; `'127.0.0.1:0'` by default. */
  listen?: string
  /** Peers to pin: enrollment tokens (`axon://<key>@host:port`) or objects. */
  peers?: string | PeerObject | Iterable<string | PeerObject>
  /** `'axon/1'` (default) or `'v2'`. */
  protocol?: 'axon/1' | 'v2'
  /** v2: the payload a `discover` is answered with. */
  capabilities?: Record<string, unknown> | null
  /** v2: the name in `hello`. */
  agentName?: string | null
  /** The default timeout of `request` and `send`, in seconds (30). */
  requestTimeout?: number
  /** How long a served request may take before it is answered `timeout`, in seconds (30). */
  handlerTimeout?: number
  /** How long the peer's network thread spins before it sleeps, in seconds, from 0 (never) to
   * `MAX_BUSY_POLL` (default 0.00005); the event loop, while a `request` or `send` is awaited,
   * turns without sleeping for up to twice that after the last one was made. Each saves a
   * thread wake-up per round trip, at the cost of busy cores while requests flow. */
  busyPoll?: number
}

/** A known peer, as `Peer#peers` lists it. */
export interface PeerState {
  agent_id: string
  addr: string | null
  status: 'connected' | 'connecting' | 'disconnected'
  /** The connection's round trip time, when connected. */
  rtt_ms: number | null
}

/**
 * What `Peer#inbound` yields: a message, an unsolicited error, or a refused
 * peer (`pair_request`: `agent_id`, `pubkey`, `addr` when known and a `token`
 * to `addPeer` it with).
 */
export type PeerEvent =
  | { type: 'message'; from: string; id: string; kind: string; ref: string | null; payload: Record<string, unknown> }
  | {
      type: 'error'
      from: string
      id: string
      kind: 'error'
      ref: string | null
      payload: Record<string, unknown>
      code: string | null
      message: string | null
      retryable: boolean
    }
  | { type: 'pair_request'; agent_id: string; pubkey: string; addr: string | null; token: string | null }

/** A served request's handler: returns the reply's payload (or undefined for `{}`). */
export type PeerHandler = (
  from: string,
  kind: string,
  payload: Record<string, unknown>,
) => Record<string, unknown> | null | undefined | Promise<Record<string, unknown> | null | undefined>

/**
 * An AXON peer this program owns: it talks to AXON daemons (and other peers)
 * over QUIC with mutual TLS: `const peer = await Peer.start({...})`. A started
 * peer keeps the process alive until `close()`. mDNS discovery is not
 * supported: pin peers with tokens.
 */
export declare class Peer {
  private constructor()
  /** Start a peer; rejects with `AxonStartError` or `AxonInvalidArgumentError`. */
  static start(options?: PeerOptions): Promise<Peer>
  /** This peer's agent id. */
  readonly agentId: string
  /** Its Ed25519 public key, standard base64. */
  readonly publicKey: string
  /** The address it listens on, `"ip:port"`. */
  readonly listenAddr: string
  /** Its enrollment token, `axon://<base64url key>@<listenAddr>`. */
  readonly token: string
  /** `'axon/1'` or `'v2'`. */
  readonly protocol: 'axon/1' | 'v2'
  /** Whether `close()` was called. */
  readonly closed: boolean
  /** Pin a peer (a token or an object); resolves to its agent id. */
  addPeer(peer: string | PeerObject): Promise<string>
  /** Unpin a peer and close its connections; whether it was known. */
  removePeer(agentId: string): Promise<boolean>
  /** The known peers and their state. */
  peers(): Promise<PeerState[]>
  /**
   * Send a request; resolves to the reply's payload (axon/1 kind `request`;
   * v2 `query` by default, or `delegate`, `discover`, `ping`, `cancel`).
   * Rejects with `AxonRemoteError` for an `error` reply, else another `AxonPeerError`.
   */
  request(agentId: string, payload: Record<string, unknown>, options?: { kind?: string; timeout?: number }): Promise<Record<string, any>>
  /** Send a message (axon/1: any kind but `request`; v2: `notify`, `result`, `error`); resolves to its id. */
  send(agentId: string, payload: Record<string, unknown>, options?: { kind?: string; ref?: string | null; timeout?: number }): Promise<string>
  /**
   * Answer requests with `handler(fromAgentId, kind, payload)`; a thrown
   * `AxonRemoteError` replies with that error. `null` stops serving.
   */
  serve(handler: PeerHandler | null): void
  /** Messages, unsolicited errors and refused peers as they arrive; ends when the peer closes. */
  inbound(): AsyncGenerator<PeerEvent, void, undefined>
  /** Close the peer; operations in flight reject with `AxonClosedError`. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
