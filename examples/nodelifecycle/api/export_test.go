package api

// ProtobufMediaType and ProtobufMagic are the protobuf encoding's media
// type and magic, for the external tests.
const ProtobufMediaType = protobufMediaType

var ProtobufMagic = protobufMagic
