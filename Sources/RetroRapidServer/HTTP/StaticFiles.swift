import Foundation
import RetroRapidLWS

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

/// The web fonts the stylesheet names after its local() faces, served at `/fonts` from a folder
/// that scripts/install-fonts.sh fills from Debian's fonts-dseg and fonts-inter (with each
/// package's licence as LICENSE-<package>.txt), so no font file is committed. Same file mount
/// and content types as the web root: .ttf font/ttf, .otf font/otf, .woff2 font/woff2, and
/// libwebsockets' own .txt text/plain. The same 256-byte path limit applies.
struct FontFiles: Sendable {
    static let mountpoint = "/fonts"
    /// Absolute path of the folder.
    let directory: String

    /// Nil when `path` is not a directory: then there is no `/fonts` and the CSS falls back.
    init?(path: String) {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        guard Self.isDirectory(url.path) else { return nil }
        directory = url.path
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    var mount: LWSMount {
        // No index file: a request for the folder itself is a missing file, so a 404.
        .files(mountpoint: Self.mountpoint, directory: directory, defaultFile: "index.html",
               extraMimeTypes: StaticFiles.extraMimeTypes)
    }
}
