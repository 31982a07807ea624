import kado from './kado.js'

export const {
  TOON_VERSION,
  HEADER_SIZE,
  COMPRESSION_THRESHOLD,
  MAGIC_COMPRESSED,
  DEFAULT_MAX_FRAME_SIZE,
  MessageType,
  TOONEncoder,
  TOONDecoder,
  FrameDecoder,
  compress,
  decompress,
  isCompressed,
  KadoError,
  PolywireError,
} = kado
export default kado
