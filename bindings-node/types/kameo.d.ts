/// <reference types="node" />
/**
 * Kameo remote actors: the wire format of the Rust `kameo` crate 0.22.2
 * (feature `remote`), byte-identical to the crate (proven against it by the
 * kameo-parity test crate).
 *
 * Requests and responses are CBOR (libp2p's request-response cbor codec, no
 * length prefix) in serde's externally tagged shape with serde's field
 * names; payloads, replies and handler errors are MessagePack as
 * `rmp_serde::to_vec_named` writes them (`pack` / `unpack`). Decoding
 * accepts what kameo accepts and rejects what it rejects, throwing
 * `KameoError` with a stable `code` (`KAMEO_*`) and the byte `offset`.
 *
 * Bytes are `Uint8Array`s (`Buffer`s on output). Integers beyond 2^53-1 are
 * `BigInt`s on output; numbers and BigInts are both accepted on input.
 *
 * An argument of the wrong type (a sequence id that is no number or BigInt,
 * a name that is no string, bytes that are none...) is a `TypeError` with
 * code `KAMEO_INVALID_ARGUMENT`; a sequence id or Duration out of range is a
 * `KameoError` `KAMEO_INVALID_VALUE`. Both are `instanceof PolywireError`.
 */
import { KameoError, PolywireError } from './errors'
export { KameoError, PolywireError }

/** The libp2p request-response protocol of requests and responses. */
export declare const MESSAGING_PROTOCOL: '/kameo/messaging/1.0.0'
/** The Kademlia protocol of the actor registry. */
export declare const REGISTRY_PROTOCOL: '/kameo/registry/1.0.0'
/** The cbor codec reads at most this much of a request stream (1 MiB). */
export declare const MAX_REQUEST_SIZE: 1048576
/** ... and of a response stream (10 MiB). */
export declare const MAX_RESPONSE_SIZE: 10485760
/** kameo's registry drops metadata records with larger values (64 KiB). */
export declare const MAX_METADATA_SIZE: 65536
/** CBOR nesting budget (kameo's own: 256). */
export declare const MAX_DEPTH: 256
/** Nesting limit of values (256). */
export declare const MAX_VALUE_DEPTH: 256

/** A u64 (0 to 2^64 - 1): a number, or a BigInt (on output, beyond 2^53 - 1). */
export type U64 = number | bigint
/** Bytes on input: a `Uint8Array` (`Buffer`), an `ArrayBuffer` or another view. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView
/** A base58 peer id (`12D3KooW...`) or its multihash bytes. */
export type PeerIdLike = string | Bytes

/** An actor id, as the decoders return it (and `actorId` builds it). */
export interface ActorId {
  /** The actor's sequence id. */
  sequence_id: U64
  /** Base58; `null` for an actor of a node without a swarm. */
  peer_id: string | null
}
/** A `core::time::Duration` as serde writes it (`duration` builds one). */
export interface Duration {
  /** Whole seconds. */
  secs: U64
  /** Nanoseconds (0 to 999,999,999). */
  nanos: number
}
/** What `duration` (and the timeouts of `ask`/`tell`) take: seconds, `[secs, nanos]`, a `Duration`, or none. */
export type DurationLike = Duration | number | [U64, number] | null | undefined

/** `SwarmRequest::Ask`: a message whose reply the sender awaits. */
export interface Ask {
  /** The receiving actor. */
  actor_id: ActorId
  /** The actor's remote id (`remoteActorId`). */
  actor_remote_id: string
  /** The message's remote id (`remoteMessageId`). */
  message_remote_id: string
  /** The message, MessagePack (`pack`). */
  payload: Uint8Array
  /** How long to wait for room in the actor's mailbox (`null` for none). */
  mailbox_timeout?: Duration | null
  /** How long to wait for the reply (`null` for none). */
  reply_timeout?: Duration | null
  /** Fail with `MailboxFull` rather than wait when the mailbox is full. */
  immediate: boolean
}
/** `SwarmRequest::Tell`: a message without a reply (fields as in `Ask`). */
export interface Tell {
  /** The receiving actor. */
  actor_id: ActorId
  /** The actor's remote id (`remoteActorId`). */
  actor_remote_id: string
  /** The message's remote id (`remoteMessageId`). */
  message_remote_id: string
  /** The message, MessagePack (`pack`). */
  payload: Uint8Array
  /** How long to wait for room in the actor's mailbox (`null` for none). */
  mailbox_timeout?: Duration | null
  /** Fail with `MailboxFull` rather than wait when the mailbox is full. */
  immediate: boolean
}
/** Where an actor panicked (`ActorStopReason.Panicked`). */
export type PanicReason =
  | 'HandlerPanic' | 'OnMessage' | 'OnStart' | 'OnPanic' | 'OnLinkDied' | 'OnStop' | 'OnUndelivered' | 'Next'
/** Why an actor stopped (in `SignalLinkDied`). */
export type ActorStopReason =
  | 'Normal' | 'SupervisorRestart' | 'Killed' | 'PeerDisconnected'
  | { Panicked: { err: string; reason: PanicReason } }
  | { LinkDied: { id: ActorId; reason: ActorStopReason } }
/** A request on the messaging protocol, in serde's externally tagged shape. */
export type SwarmRequest =
  | { Ask: Ask }
  | { Tell: Tell }
  | { Link: { actor_id: ActorId; actor_remote_id: string; sibling_id: ActorId; sibling_remote_id: string } }
  | { Unlink: { actor_id: ActorId; actor_remote_id: string; sibling_id: ActorId } }
  | { SignalLinkDied: { dead_actor_id: ActorId; notified_actor_id: ActorId; notified_actor_remote_id: string; stop_reason: ActorStopReason } }

/** Why a remote send failed; `E`: the handler's error (MessagePack), for an ask. */
export type RemoteSendError<E = never> =
  | 'ActorNotRunning' | 'ActorStopped' | 'BadActorType' | 'MailboxFull' | 'ReplyTimeout'
  | 'SwarmNotBootstrapped' | 'DialFailure' | 'NetworkTimeout' | 'ConnectionClosed' | 'UnsupportedProtocols'
  | { UnknownActor: { actor_remote_id: string } }
  | { UnknownMessage: { actor_remote_id: string; message_remote_id: string } }
  | { SerializeMessage: string } | { DeserializeMessage: string } | { SerializeReply: string }
  | { SerializeHandlerError: string } | { DeserializeHandlerError: string }
  | ([E] extends [never] ? never : { HandlerError: E })
/** A `Result<(), RemoteSendError>` as serde writes it. */
export type UnitResult = { Ok: null } | { Err: RemoteSendError }
/** A response on the messaging protocol, in serde's externally tagged shape. */
export type SwarmResponse =
  | { Ask: { Ok: Uint8Array } | { Err: RemoteSendError<Uint8Array> } }
  | { Tell: UnitResult }
  | { Link: UnitResult }
  | { Unlink: UnitResult }
  | { SignalLinkDied: UnitResult }
  | { OutboundFailure: RemoteSendError }

/** An actor's registry record (`decodeRegistration`): its actor id's fields and its remote id. */
export interface Registration {
  /** The actor's sequence id. */
  sequence_id: U64
  /** Base58 peer id, or `null`. */
  peer_id: string | null
  /** The actor's remote id (`RemoteActor::REMOTE_ID`). */
  remote_id: string
}

/**
 * CBOR bytes of a `SwarmRequest` (`{Ask}`, `{Tell}`, `{Link}`, `{Unlink}`,
 * `{SignalLinkDied}`), as kameo writes it. A value of the wrong shape throws
 * `KameoError` `KAMEO_INVALID_VALUE` naming the field.
 */
export declare function encodeRequest(value: SwarmRequest): Buffer
/**
 * A `SwarmRequest` from CBOR bytes, as kameo reads it (bytes after the body
 * are ignored). Throws `KameoError` (`KAMEO_EOF`, `KAMEO_UNKNOWN_VARIANT`,
 * `KAMEO_MISSING_FIELD`, ...) with the byte `offset`.
 */
export declare function decodeRequest(data: Bytes): SwarmRequest
/**
 * CBOR bytes of a `SwarmResponse` (`{Ask: {Ok: bytes}}`, `{Tell: {Err:
 * 'MailboxFull'}}`, `{OutboundFailure: 'DialFailure'}`, ...), as kameo writes it.
 */
export declare function encodeResponse(value: SwarmResponse): Buffer
/**
 * A `SwarmResponse` from CBOR bytes, as kameo reads it (bytes after the
 * body are ignored). Throws `KameoError`.
 */
export declare function decodeResponse(data: Bytes): SwarmResponse
/**
 * The value of an actor's registry metadata record (`ActorRegistration`):
 * its actor id (`sequenceId`, 0 to 2^64 - 1, else `KAMEO_INVALID_VALUE`;
 * `peerId`, base58 text, its bytes or null) and `remoteId`.
 */
export declare function encodeRegistration(sequenceId: U64, peerId: PeerIdLike | null, remoteId: string): Buffer
/**
 * The `ActorRegistration` record kameo stores in the DHT, from its bytes:
 * the actor id (`sequence_id`, `peer_id`) and `remote_id`. Throws
 * `KameoError` (`KAMEO_REGISTRATION_EMPTY`, `KAMEO_REGISTRATION_TRUNCATED`, ...).
 */
export declare function decodeRegistration(data: Bytes): Registration
/** `{actorName}:meta:{base58 peer id}` */
export declare function metadataKey(actorName: string, peerId: PeerIdLike): string
/**
 * `[actorName, peerId]` (the peer id base58) of a metadata record key, as
 * kameo validates it: `KAMEO_INVALID_METADATA_KEY` or a peer id error otherwise.
 */
export declare function parseMetadataKey(key: string | Bytes): [string, string]
/** The DHT provider key under which kameo announces `actorName`: its UTF-8 bytes. */
export declare function providerKey(actorName: string): Buffer
/** Base58 peer id of a 32-byte Ed25519 public key or a protobuf-encoded key. */
export declare function peerIdFromPublicKey(key: Bytes): string
/**
 * The multihash bytes of a peer id (base58 text, or bytes, which are
 * checked). Throws `KameoError` `KAMEO_INVALID_BASE58` or `KAMEO_INVALID_PEER_ID`.
 */
export declare function peerIdToBytes(peerId: PeerIdLike): Buffer
/** The base58 peer id of multihash bytes (`KAMEO_INVALID_PEER_ID` when they are none). */
export declare function peerIdFromBytes(data: Bytes): string
/**
 * `ActorId::to_bytes`: the sequence id (0 to 2^64 - 1, u64 little-endian)
 * then the peer id's multihash bytes, when given. A bad value throws
 * `KameoError` `KAMEO_INVALID_VALUE`.
 */
export declare function actorIdToBytes(sequenceId: U64, peerId?: PeerIdLike | null): Buffer
/**
 * `ActorId::from_bytes`: `{sequence_id, peer_id}` (`peer_id` null when the
 * bytes hold none). Fewer than 8 bytes throw `KameoError` `KAMEO_ACTOR_ID_TOO_SHORT`.
 */
export declare function actorIdFromBytes(data: Bytes): ActorId
/** The id `#[remote_message]` gives `impl Message<messageType> for actorType`. */
export declare function remoteMessageId(
  crateName: string,
  crateMajor: number,
  modulePath: string,
  messageType: string,
  actorType: string,
  implGenerics?: string,
): string
/** The remote id `#[derive(RemoteActor)]` gives the actor `ident` in `modulePath`: `{modulePath}::{ident}`. */
export declare function remoteActorId(modulePath: string, ident: string): string
/** MessagePack of a value as `rmp_serde::to_vec_named` writes the same data. */
export declare function pack(value: unknown): Buffer
/**
 * The value of MessagePack bytes as `rmp_serde` reads them: maps to objects
 * (a map with keys that are no strings to a `Map`), arrays to arrays, bin to
 * Buffers, integers beyond 2^53 - 1 to BigInts. Throws `KameoError`
 * (`KAMEO_MSGPACK_*`, `KAMEO_DEPTH_LIMIT`); bytes after the value are
 * `KAMEO_MSGPACK_TRAILING`.
 */
export declare function unpack(data: Bytes): unknown
/**
 * An actor id value `{sequence_id, peer_id}` for `ask` and `tell`.
 * `sequenceId`: 0 to 2^64 - 1 (else `KameoError` `KAMEO_INVALID_VALUE`);
 * `peerId`: base58 text or null, returned as given (only its type is
 * checked; a malformed peer id fails when the request is encoded). Another
 * type throws a TypeError `KAMEO_INVALID_ARGUMENT`.
 */
export declare function actorId(sequenceId: U64, peerId?: string | null): ActorId
/**
 * A `Duration` `{secs, nanos}` from seconds (a number or BigInt),
 * `[secs, nanos]` or such an object (returned as is); null and undefined
 * give null. A negative or non-finite number throws `KameoError`
 * `KAMEO_INVALID_VALUE`, another type a TypeError `KAMEO_INVALID_ARGUMENT`.
 */
export declare function duration(value: DurationLike): Duration | null
/**
 * A `SwarmRequest::Ask` value (for `encodeRequest`). `actor` is an actor id
 * (or a bare sequence id), `payload` the MessagePack message (see `pack`),
 * the timeouts anything `duration` takes; `immediate` defaults to false.
 */
export declare function ask(
  actor: ActorId | U64,
  actorRemoteId: string,
  messageRemoteId: string,
  payload: Uint8Array,
  options?: { mailboxTimeout?: DurationLike; replyTimeout?: DurationLike; immediate?: boolean },
): { Ask: Ask }
/** A `SwarmRequest::Tell` value (see `ask`). */
export declare function tell(
  actor: ActorId | U64,
  actorRemoteId: string,
  messageRemoteId: string,
  payload: Uint8Array,
  options?: { mailboxTimeout?: DurationLike; immediate?: boolean },
): { Tell: Tell }

// ---------------------------------------------------------------- the peer

/**
 * An ask, tell, lookup, registration or dial of a `Node` failed. `code` is
 * stable (`KAMEO_` and kameo's `RemoteSendError` variant in upper snake case
 * for send errors), `variant` the `RemoteSendError` variant name (`null` for
 * errors that are not one). Throw one from a served handler to answer with
 * that variant.
 */
export declare class KameoRemoteError extends KameoError {
  constructor(message?: string, code?: string, variant?: string | null)
  readonly variant: string | null
}
/** The actor is not running (or the node does not host it). */
export declare class ActorNotRunning extends KameoRemoteError {}
/** The actor stopped before it replied. */
export declare class ActorStopped extends KameoRemoteError {}
/** The actor is not of the remote id the reference names. */
export declare class BadActorType extends KameoRemoteError {}
/** The actor's mailbox is full (an immediate send). */
export declare class MailboxFull extends KameoRemoteError {}
/** The actor did not reply within the reply timeout. */
export declare class ReplyTimeout extends KameoRemoteError {}
/** The message could not be serialized. */
export declare class SerializeMessage extends KameoRemoteError {}
/** The actor could not read the message as its message type. */
export declare class DeserializeMessage extends KameoRemoteError {}
/** The actor's reply could not be serialized. */
export declare class SerializeReply extends KameoRemoteError {}
/** The handler's error could not be serialized. */
export declare class SerializeHandlerError extends KameoRemoteError {}
/** The handler's error could not be deserialized. */
export declare class DeserializeHandlerError extends KameoRemoteError {}
/** The remote node's swarm is not bootstrapped. */
export declare class SwarmNotBootstrapped extends KameoRemoteError {}
/** The peer could not be dialed (or the dial timed out). */
export declare class DialFailure extends KameoRemoteError {}
/** The request timed out (the node's `requestTimeout`). */
export declare class NetworkTimeout extends KameoRemoteError {}
/** The connection closed before the response came. */
export declare class ConnectionClosed extends KameoRemoteError {}
/** The peer does not speak /kameo/messaging/1.0.0. */
export declare class UnsupportedProtocols extends KameoRemoteError {}
/** An I/O error on the request's stream (kameo's `RemoteSendError::Io`). */
export declare class RemoteIoError extends KameoRemoteError {}
/** A lookup or registration failed (kameo's `RegistryError`); see `code`. */
export declare class RegistryError extends KameoRemoteError {}
/** The node is closed (or closed while the operation was in flight). */
export declare class NodeClosed extends KameoRemoteError {}
/** The node could not start (a listen address could not be bound, ...). */
export declare class NodeStartError extends KameoRemoteError {}
/** No actor of that remote id is known. */
export declare class UnknownActor extends KameoRemoteError {
  actorRemoteId?: string
}
/** The actor type has no message of that remote id; throw it from a served handler for a message it does not know. */
export declare class UnknownMessage extends KameoRemoteError {
  actorRemoteId?: string
  messageRemoteId?: string
}
/**
 * The actor's handler returned an error: `value` is the error value (unpacked
 * from `payload`, its MessagePack bytes). Throw `new HandlerError(value)` from
 * a served handler to reply with that error value.
 */
export declare class HandlerError extends KameoRemoteError {
  constructor(value: unknown, options?: { payload?: Uint8Array | null; message?: string })
  readonly value: unknown
  readonly payload: Buffer | null
}

/** Options of `RemoteActorRef#ask`. */
export interface AskOptions {
  mailboxTimeout?: DurationLike
  /** Past it, the ask fails with `ReplyTimeout`. */
  replyTimeout?: DurationLike
  /** `try_send` on the remote side: fail with `MailboxFull` rather than wait. */
  immediate?: boolean
  /** Send `value` and return the reply as MessagePack bytes, as they are. */
  raw?: boolean
}

/** Options of `RemoteActorRef#tell`. */
export interface TellOptions {
  mailboxTimeout?: DurationLike
  immediate?: boolean
  raw?: boolean
}

/** An actor found by `node.lookup` (or registered by `node.register`). */
export declare class RemoteActorRef {
  private constructor()
  /** `{ sequence_id, peer_id }`, as `actorId()` builds it. */
  readonly actorId: ActorId
  /** The actor type's `RemoteActor::REMOTE_ID`. */
  readonly remoteId: string
  /** The base58 id of the peer hosting the actor. */
  readonly peerId: string | null
  /** The node this reference sends through. */
  readonly node: Node
  /** Whether `other` names the same actor. */
  equals(other: unknown): boolean
  /**
   * Ask the actor: `value` is packed as `rmp_serde::to_vec_named` writes it
   * and the reply unpacked (with `raw: true`, both are bytes as they are).
   * Rejects with a `KameoRemoteError` subclass.
   */
  ask(messageRemoteId: string, value?: unknown, options?: AskOptions): Promise<unknown>
  /** Tell the actor (no reply); resolves once the remote node has the message. */
  tell(messageRemoteId: string, value?: unknown, options?: TellOptions): Promise<void>
}

/** What `node.register` serves: `ask`/`tell` methods or one function for both, sync or async. */
export type ActorHandler =
  | { ask?(messageRemoteId: string, value: any): unknown; tell?(messageRemoteId: string, value: any): unknown }
  | ((messageRemoteId: string, value: any) => unknown)

/** Options of `Node.start`. */
export interface NodeOptions {
  /** 32 bytes fixing the Ed25519 identity (and so the peer id). */
  keypairSeed?: Uint8Array | null
  /** Multiaddrs to listen on; default `['/ip4/127.0.0.1/tcp/0']`. */
  listen?: string | Iterable<string>
  /** Peers (`.../p2p/<peer id>`) dialed before `start` resolves. */
  bootstrap?: string | Iterable<string>
  /** Discover peers on the local network with mDNS. */
  mdns?: boolean
  /** How long an ask or tell waits for the remote node's response (default 10 s). */
  requestTimeout?: DurationLike
  /** How long a dial may take (default 10 s). */
  dialTimeout?: DurationLike
}

/**
 * A Kameo node this program owns (TCP + noise + yamux and QUIC, kameo's
 * Kademlia registry on `/kameo/registry/1.0.0`, request-response with the
 * cbor codec on `/kameo/messaging/1.0.0`): `const node = await Node.start()`.
 * A started node keeps the process alive until `close()`.
 */
export declare class Node {
  private constructor()
  /** Start a node listening on `listen` and dial the `bootstrap` peers before it resolves. */
  static start(options?: NodeOptions): Promise<Node>
  /** This node's peer id, base58. */
  readonly peerId: string
  /** The addresses it listens on, each ending in `/p2p/<peer id>`. */
  readonly listenAddrs: string[]
  /** Whether `close()` was called. */
  readonly closed: boolean
  /** Dial a peer; rejects with `DialFailure` if it cannot be reached within `dialTimeout`. */
  dial(multiaddr: string): Promise<void>
  /** The first actor registered under `name`, or `null` once the DHT query ends without one. */
  lookup(name: string): Promise<RemoteActorRef | null>
  /** Every actor registered under `name`, as the DHT query finds them. */
  lookupAll(name: string): AsyncGenerator<RemoteActorRef, void, undefined>
  /**
   * Register an actor of type `remoteId` under `name`, as kameo does; its
   * asks and tells go to `handler`. What `ask` returns is the reply; a thrown
   * `HandlerError(value)` replies with that error value, another thrown error
   * with its message (a string), a `KameoRemoteError` subclass with its variant.
   */
  register(name: string, handler: ActorHandler, options: { remoteId: string; raw?: boolean }): Promise<RemoteActorRef>
  /** Stop serving `name`; resolves to whether it was registered. */
  unregister(name: string): Promise<boolean>
  /** Close the node; operations in flight reject with `NodeClosed`. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
