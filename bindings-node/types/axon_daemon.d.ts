/// <reference types="node" />
/**
 * A client for a local upstream AXON daemon (hwbehrens/axon v0.7.x and main)
 * over its Unix socket (`<root>/axon.sock`: `$AXON_ROOT`, else `~/.axon`),
 * in plain JavaScript; exported by `polywire/axon`. Every command carries a
 * `req_id` and its reply is matched by it, so several may be in flight; the
 * daemon's events (`inbound`, `pair_request`) arrive between the replies and
 * are kept (at most `maxEvents`, the oldest dropped first) until `events()`
 * yields them. The daemon runs commands one at a time, for every client: a
 * command's deadline is the time it may take (a request's `timeoutSecs`,
 * default 30, the daemon's 10 s for a message) plus the client's `timeout`,
 * counted from when the commands sent before it are due.
 *
 * Errors are `AxonDaemonError` subclasses (an `AxonError`): the daemon's
 * codes (`invalid_command`, `command_too_large`, `peer_not_found`,
 * `self_send`, `peer_unreachable`, `timeout`, `internal_error`) and the
 * client's own (`AXON_DAEMON_UNAVAILABLE`, `AXON_DAEMON_DISCONNECTED`,
 * `AXON_DAEMON_CLOSED`, `AXON_DAEMON_TIMEOUT`, `AXON_DAEMON_PROTOCOL`). What
 * the daemon would refuse is refused before sending with its class (a line
 * over 65,536 bytes, a bad `kind`, `timeoutSecs` or `ref`, a payload nested
 * more than 126 deep or holding an unpaired surrogate, a malformed token). A
 * bad argument is a `TypeError` or `RangeError` with code
 * `AXON_INVALID_ARGUMENT`.
 */
import { AxonError } from './errors'

/** An error code of the daemon (an error reply's `error`). */
export type DaemonErrorCode =
  | 'invalid_command' | 'command_too_large' | 'peer_not_found' | 'self_send'
  | 'peer_unreachable' | 'timeout' | 'internal_error'

/** The daemon's 7 error codes (upstream's `IpcErrorCode`), in its order. */
export declare const DAEMON_ERROR_CODES: readonly DaemonErrorCode[]
/** 65536: the longest command line the daemon reads, in bytes without the newline. */
export declare const DAEMON_MAX_COMMAND_SIZE: number

/**
 * An axon/1 envelope as the daemon shows it; `from`/`to` are filled in by the
 * daemon from the TLS identity, `ref` is absent when none.
 */
export interface DaemonEnvelope {
  id: string
  /** `request`, `response`, `message`, `error` (`unknown` for a kind the daemon does not know). */
  kind: string
  ref?: string
  payload: Record<string, unknown>
  from?: string
  to?: string
}
/** An entry of `DaemonClient.peers()`. */
export interface DaemonPeer {
  agent_id: string
  /** `ip:port`. */
  addr: string
  status: 'discovered' | 'connecting' | 'connected' | 'disconnected'
  /** The round trip time, when known. */
  rtt_ms?: number
  /** Where the daemon learned the peer: its config or `addPeer`, mDNS, its cache. */
  source: 'static' | 'discovered' | 'cached'
}
/** What `DaemonClient.status()` resolves to. */
export interface DaemonStatus {
  uptime_secs: number
  peers_connected: number
  messages_sent: number
  messages_received: number
}
/** What `DaemonClient.whoami()` resolves to. */
export interface DaemonIdentity {
  agent_id: string
  /** Standard base64 of the Ed25519 public key. */
  public_key: string
  /** The configured name, when there is one. */
  name?: string
  /** The daemon's version, e.g. `"0.7.2"`. */
  version: string
  uptime_secs: number
}
/**
 * A message, request, reply or error that reached the daemon (a request is
 * already answered `unhandled` by it); `from` is the sender's agent id.
 */
export interface InboundEvent {
  event: 'inbound'
  from: string
  envelope: DaemonEnvelope
}
/** An agent the daemon has not pinned tried to connect and was refused in the TLS handshake. */
export interface PairRequestEvent {
  event: 'pair_request'
  agent_id: string
  /** Standard base64 of its public key. */
  pubkey: string
  /** Its address, when the daemon knows it. */
  addr?: string
}
/** An event `events()` yields (an event of a newer daemon as it came). */
export type DaemonEvent = InboundEvent | PairRequestEvent | ({ event: string } & Record<string, unknown>)

/** Options of `DaemonClient.connect`. */
export interface DaemonConnectOptions {
  /** The socket (default `DaemonClient.defaultPath()`). */
  path?: string
  /**
   * Seconds to wait for the connection, and for each command's reply beyond
   * the time the command itself may take.
   * @default 10
   */
  timeout?: number
  /**
   * How many events are kept until `events()` takes them (the oldest are
   * dropped first; 0 keeps none).
   * @default 1024
   */
  maxEvents?: number
}
/** Options of `DaemonClient.send`. */
export interface DaemonSendOptions {
  /** `'request'` (the default: wait for the reply) or `'message'`. */
  kind?: 'request' | 'message'
  /** A request's timeout in whole seconds, at least 1 (the daemon's default: 30). */
  timeoutSecs?: number | bigint | null
  /** A UUID the message refers to (a request's id, to answer it). */
  ref?: string | null
}

/** A connection to a local AXON daemon's Unix socket: `const client = await DaemonClient.connect()`. */
export declare class DaemonClient {
  /** Not for use: connect with `await DaemonClient.connect(...)` (throws a `TypeError`). */
  private constructor()
  /**
   * The daemon's socket as upstream finds it: `$AXON_ROOT/axon.sock` when
   * `AXON_ROOT` is set and not blank, else `$HOME/.axon/axon.sock`; throws
   * `DaemonUnavailableError` when neither is set.
   */
  static defaultPath(): string
  /**
   * Connect to the daemon's socket (a path, or options); rejects with
   * `DaemonUnavailableError` when nothing accepts the connection.
   */
  static connect(options?: string | DaemonConnectOptions): Promise<DaemonClient>
  /** The socket's path. */
  readonly path: string
  /** Whether `close()` was called. */
  readonly closed: boolean
  /** How many events were dropped because `maxEvents` were already waiting. */
  readonly droppedEvents: number
  /**
   * Close the connection: commands in flight reject with `DaemonClosedError`,
   * `events()` iterators end after the events already received. Idempotent.
   */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
  /**
   * Send a request to the agent `to` through the daemon and resolve to the
   * agent's reply envelope (kind `response` or `error`: an upstream daemon
   * answers every request `error` / `unhandled`); past `timeoutSecs` the
   * daemon answers `timeout` (`DaemonTimeoutError`). The daemon also pushes
   * the reply to every client as an `inbound` event. `payload`: an object.
   */
  send(to: string, payload: Record<string, unknown>, options?: DaemonSendOptions & { kind?: 'request' }): Promise<DaemonEnvelope>
  /** Send a message (delivered within the daemon's 10 s) and resolve to its id. */
  send(to: string, payload: Record<string, unknown>, options: DaemonSendOptions & { kind: 'message'; timeoutSecs?: null }): Promise<string>
  /** The daemon's peer table, sorted by agent id. */
  peers(): Promise<DaemonPeer[]>
  /** The daemon's counters. */
  status(): Promise<DaemonStatus>
  /** The daemon's identity. */
  whoami(): Promise<DaemonIdentity>
  /**
   * Pin a peer in the daemon (until it restarts) and resolve to its agent id:
   * an enrollment token `axon://<base64url key>@host:port` (decoded with
   * upstream's rules), or `{ pubkey, addr }` (standard base64, `host:port`).
   * The daemon answers `invalid_command` for a peer it already has or an
   * address it cannot resolve, `self_send` for its own key.
   */
  addPeer(token: string | { pubkey: string; addr: string }): Promise<string>
  /**
   * The daemon's events as they arrive: `for await (const e of client.events())`.
   * Ends after `close()`; throws `DaemonDisconnectedError` once the
   * connection is lost and the events received before are taken.
   */
  events(): AsyncGenerator<DaemonEvent, void, undefined>
}

/**
 * A command to the local AXON daemon failed: `code` is the daemon's code (one
 * of `DAEMON_ERROR_CODES`) or the client's own (`AXON_DAEMON_*`), `message`
 * what happened (for an error reply, the daemon's text).
 */
export declare class AxonDaemonError extends AxonError {
  /** `message` defaults to the daemon's text for `code`, `code` to the class's. */
  constructor(message?: string, code?: string)
  /** The class's code. */
  static readonly code: string
}
/** `invalid_command`: the daemon could not parse the command or refused a field's value (also thrown before sending). */
export declare class DaemonInvalidCommandError extends AxonDaemonError {}
/** `command_too_large`: the line is over 65,536 bytes (refused before sending; the daemon closes the connection after it). */
export declare class DaemonCommandTooLargeError extends AxonDaemonError {}
/** `peer_not_found`: the daemon has no peer with that agent id. */
export declare class DaemonPeerNotFoundError extends AxonDaemonError {}
/** `self_send`: the target (or the key given to `addPeer`) is the daemon's own agent. */
export declare class DaemonSelfSendError extends AxonDaemonError {}
/** `peer_unreachable`: the peer is known but the daemon could not deliver. */
export declare class DaemonPeerUnreachableError extends AxonDaemonError {}
/** `timeout`: the remote agent did not answer the request within `timeoutSecs`. */
export declare class DaemonTimeoutError extends AxonDaemonError {}
/** `internal_error`: the daemon failed unexpectedly. */
export declare class DaemonInternalError extends AxonDaemonError {}
/** `AXON_DAEMON_UNAVAILABLE`: the socket could not be connected to. */
export declare class DaemonUnavailableError extends AxonDaemonError {}
/**
 * `AXON_DAEMON_DISCONNECTED`: the connection closed or failed; commands in flight and later
 * ones fail with it (the daemon drops clients of another user, beyond 64 clients, and a client
 * that leaves 1,024 lines unread).
 */
export declare class DaemonDisconnectedError extends AxonDaemonError {}
/** `AXON_DAEMON_CLOSED`: the client was closed. */
export declare class DaemonClosedError extends AxonDaemonError {}
/** `AXON_DAEMON_TIMEOUT`: the daemon did not answer the command within its deadline. */
export declare class DaemonReplyTimeoutError extends AxonDaemonError {}
/** `AXON_DAEMON_PROTOCOL`: the daemon sent a line that is not a JSON object, or a reply without its fields. */
export declare class DaemonProtocolError extends AxonDaemonError {}
