/// One entry in a vhost's URL space. libwebsockets picks the longest matching mountpoint.
public enum LWSMount: Sendable {
    /// Serve a directory (`LWSMPRO_FILE`): libwebsockets does ranges, ETag and 304 itself, and
    /// hands a request for a missing file to the protocol callback (so to protocols[0]).
    /// `extraMimeTypes` maps a file name suffix (".mjs") to a content type; libwebsockets checks
    /// it before its own table and answers 415 for a file neither names.
    case files(mountpoint: String, directory: String, defaultFile: String,
               extraMimeTypes: [(suffix: String, contentType: String)])
    /// Hand requests to protocols[0]'s callback (`LWSMPRO_CALLBACK`).
    case callback(mountpoint: String)
}
