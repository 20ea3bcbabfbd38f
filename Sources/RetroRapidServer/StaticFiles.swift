import Foundation

/// The browser client: one folder served at `/` by libwebsockets' file mount, which sends
/// ETag (file size and modification second, unquoted) and answers If-None-Match with 304 on
/// its own. It builds each file's path in 256 bytes (folder + "/" + URL path): keep the web
/// root's path short.
struct StaticFiles: Sendable {
    /// Absolute path of the folder.
    let directory: String
    let defaultFile = "index.html"

    /// Content types by file name suffix, for what libwebsockets 4.1.6 lacks or gets wrong. It
    /// looks in this list first, then in its own table (.html .css .js=text/javascript .json
    /// .svg .png .jpg .jpeg .gif .ico .txt .xml .gz, and fonts as application/font-woff2,
    /// application/font-woff, application/x-font-ttf, and .otf as font-woff), and answers 415
    /// for a file neither names: a file type the client ships must be listed here.
    static let extraMimeTypes: [(suffix: String, contentType: String)] = [
        (".mjs", "text/javascript"),
        (".webmanifest", "application/manifest+json"),
        (".woff2", "font/woff2"),
        (".woff", "font/woff"),
        (".ttf", "font/ttf"),
        (".otf", "font/otf"),
        (".map", "application/json"),
        (".wasm", "application/wasm"),
        (".webp", "image/webp"),
        (".mp3", "audio/mpeg"),
        (".ogg", "audio/ogg"),
        (".wav", "audio/wav"),
    ]

    /// Checks that `path` is a directory and resolves it against the working directory.
    init(webRoot path: String) throws(HTTPServerError) {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
              isDirectory.boolValue else {
            throw HTTPServerError(.webRootMissing,
                "The web root \(url.path) is not a directory. Give the folder that holds the client's index.html.")
        }
        directory = url.path
    }

    var mount: LWSMount {
        .files(mountpoint: "/", directory: directory, defaultFile: defaultFile,
               extraMimeTypes: Self.extraMimeTypes)
    }
}
