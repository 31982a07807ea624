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
 */
import { KameoError, PolywireError } from './errors'
export { KameoError, PolywireError }

export declare const MESSAGING_PROTOCOL: '/kameo/messaging/1.0.0'
export declare const REGISTRY_PROTOCOL: '/kameo/registry/1.0.0'
/** The cbor codec reads at most this much of a request stream (1 MiB). */
export declare const MAX_REQUEST_SIZE: number
/** ... and of a response stream (10 MiB). */
export declare const MAX_RESPONSE_SIZE: number
/** kameo's registry drops metadata records with larger values (64 KiB). */
export declare const MAX_METADATA_SIZE: number
/** CBOR nesting budget (kameo's own: 256). */
export declare const MAX_DEPTH: 256
/** Nesting limit of values (256). */
export declare const MAX_VALUE_DEPTH: 256

export type U64 = number | bigint
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView
/** A base58 peer id (`12D3KooW...`) or its multihash bytes. */
export type PeerIdLike = string | Bytes

export interface ActorId {
  sequence_id: U64
  /** Base58; `null` for an actor of a node without a swarm. */
  peer_id: string | null
}
export interface Duration {
  secs: U64
  nanos: number
}
export type DurationLike = Duration | number | [U64, number] | null | undefined

export interface Ask {
  actor_id: ActorId
  actor_remote_id: string
  message_remote_id: string
  payload: Uint8Array
  mailbox_timeout?: Duration | null
  reply_timeout?: Duration | null
  immediate: boolean
}
export interface Tell {
  actor_id: ActorId
  actor_remote_id: string
  message_remote_id: string
  payload: Uint8Array
  mailbox_timeout?: Duration | null
  immediate: boolean
}
export type PanicReason =
  | 'HandlerPanic' | 'OnMessage' | 'OnStart' | 'OnPanic' | 'OnLinkDied' | 'OnStop' | 'OnUndelivered' | 'Next'
export type ActorStopReason =
  | 'Normal' | 'SupervisorRestart' | 'Killed' | 'PeerDisconnected'
  | { Panicked: { err: string; reason: PanicReason } }
  | { LinkDied: { id: ActorId; reason: ActorStopReason } }
export type SwarmRequest =
  | { Ask: Ask }
  | { Tell: Tell }
  | { Link: { actor_id: ActorId; actor_remote_id: string; sibling_id: ActorId; sibling_remote_id: string } }
  | { Unlink: { actor_id: ActorId; actor_remote_id: string; sibling_id: ActorId } }
  | { SignalLinkDied: { dead_actor_id: ActorId; notified_actor_id: ActorId; notified_actor_remote_id: string; stop_reason: ActorStopReason } }

export type RemoteSendError<E = never> =
  | 'ActorNotRunning' | 'ActorStopped' | 'BadActorType' | 'MailboxFull' | 'ReplyTimeout'
  | 'SwarmNotBootstrapped' | 'DialFailure' | 'NetworkTimeout' | 'ConnectionClosed' | 'UnsupportedProtocols'
  | { UnknownActor: { actor_remote_id: string } }
  | { UnknownMessage: { actor_remote_id: string; message_remote_id: string } }
  | { SerializeMessage: string } | { DeserializeMessage: string } | { SerializeReply: string }
  | { SerializeHandlerError: string } | { DeserializeHandlerError: string }
  | ([E] extends [never] ? never : { HandlerError: E })
export type UnitResult = { Ok: null } | { Err: RemoteSendError }
export type SwarmResponse =
  | { Ask: { Ok: Uint8Array } | { Err: RemoteSendError<Uint8Array> } }
  | { Tell: UnitResult }
  | { Link: UnitResult }
  | { Unlink: UnitResult }
  | { SignalLinkDied: UnitResult }
  | { OutboundFailure: RemoteSendError }

export interface Registration {
  sequence_id: U64
  peer_id: string | null
  remote_id: string
}

export declare function encodeRequest(value: SwarmRequest): Buffer
export declare function decodeRequest(data: Bytes): SwarmRequest
export declare function encodeResponse(value: SwarmResponse): Buffer
export declare function decodeResponse(data: Bytes): SwarmResponse
export declare function encodeRegistration(sequenceId: U64, peerId: PeerIdLike | null, remoteId: string): Buffer
export declare function decodeRegistration(data: Bytes): Registration
/** `{actorName}:meta:{base58 peer id}` */
export declare function metadataKey(actorName: string, peerId: PeerIdLike): string
export declare function parseMetadataKey(key: string | Bytes): [string, string]
export declare function providerKey(actorName: string): Buffer
/** Base58 peer id of a 32-byte Ed25519 public key or a protobuf-encoded key. */
export declare function peerIdFromPublicKey(key: Bytes): string
export declare function peerIdToBytes(peerId: PeerIdLike): Buffer
export declare function peerIdFromBytes(data: Bytes): string
export declare function actorIdToBytes(sequenceId: U64, peerId?: PeerIdLike | null): Buffer
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
export declare function remoteActorId(modulePath: string, ident: string): string
/** MessagePack of a value as `rmp_serde::to_vec_named` writes the same data. */
export declare function pack(value: unknown): Buffer
export declare function unpack(data: Bytes): unknown
export declare function actorId(sequenceId: U64, peerId?: string | null): ActorId
export declare function duration(value: DurationLike): Duration | null
export declare function ask(
  actor: ActorId | U64,
  actorRemoteId: string,
  messageRemoteId: string,
  payload: Uint8Array,
  options?: { mailboxTimeout?: DurationLike; replyTimeout?: DurationLike; immediate?: boolean },
): { Ask: Ask }
export declare function tell(
  actor: ActorId | U64,
  actorRemoteId: string,
  messageRemoteId: string,
  payload: Uint8Array,
  options?: { mailboxTimeout?: DurationLike; immediate?: boolean },
): { Tell: Tell }
