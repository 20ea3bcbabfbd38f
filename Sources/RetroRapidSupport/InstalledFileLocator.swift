import Foundation

/// The files `retrorapid` reads besides its own binary. Each has a setting that names it; when
/// no source sets it, `InstalledFileLocator` looks for it (docs/OPERATIONS.md, "Where the server
/// finds its files").
public enum InstalledFile: String, CaseIterable, Sendable {
    case webRoot, migrations, fonts, openAPI, consoleRoot

    /// The setting's key: `--web-root`, `RETRORAPID_WEB_ROOT`.
    public var settingKey: String {
        switch self {
        case .webRoot: "web-root"
        case .migrations: "migrations-path"
        case .fonts: "fonts-path"
        case .openAPI: "openapi-path"
        case .consoleRoot: "console-root"
        }
    }

    /// The property the setting fills; its built-in default is where the file is in a source checkout.
    public var keyPath: WritableKeyPath<ServerConfiguration, String> & Sendable {
        switch self {
        case .webRoot: \.webRoot
        case .migrations: \.migrationsPath
        case .fonts: \.fontsPath
        case .openAPI: \.openAPIPath
        case .consoleRoot: \.consoleRoot
        }
    }

    /// Relative to the working directory, as in a source checkout: `Web`, `Migrations`, …
    public var checkoutPath: String { ServerConfiguration()[keyPath: keyPath] }

    /// Its name inside an installed `share/retrorapid` folder.
    public var installedName: String {
        switch self {
        case .webRoot: "web"
        case .migrations: "migrations"
        case .fonts: "fonts"
        case .openAPI: "openapi.json"
        case .consoleRoot: "console"
        }
    }

    public var isDirectory: Bool { self != .openAPI }

    /// Without the Web client there is nothing to serve and without the migrations no database
    /// to open, so both stop a start; without fonts browsers use their fallbacks, and without
    /// the OpenAPI document only /api/v1/openapi.json answers 404; the console's folder is
    /// needed only when a console port is set, and `serve` says so then.
    public var isRequired: Bool { self == .webRoot || self == .migrations }

    /// How messages name it.
    public var title: String {
        switch self {
        case .webRoot: "the Web client folder"
        case .migrations: "the migrations folder"
        case .fonts: "the fonts folder"
        case .openAPI: "the OpenAPI document"
        case .consoleRoot: "the operator console folder"
        }
    }
}

/// One place a file may be, and why it is looked at.
public struct InstalledFileCandidate: Sendable, Equatable, CustomStringConvertible {
    public enum Source: Sendable, Equatable {
        /// A setting named it; the text says where (`--web-root`, `environment variable …`).
        case setting(String)
        /// Relative to the working directory: a source checkout.
        case workingDirectory
        /// `<bindir>/../share/retrorapid`: an install under a prefix (/usr/local, /opt/retrorapid).
        case executablePrefix
        /// `/usr/share/retrorapid`: a distribution's layout.
        case system
    }

    public let source: Source
    public let path: String

    public var description: String {
        switch source {
        case .setting(let name): "\(path) (set by \(name))"
        case .workingDirectory: "\(path) (in the working directory)"
        case .executablePrefix: "\(path) (next to the executable)"
        case .system: "\(path) (the system's share folder)"
        }
    }
}

/// Where one file was found, or every place it was looked for.
public struct InstalledFileLocation: Sendable, Equatable {
    public let file: InstalledFile
    /// In the order they were tried; one only when a setting names the path.
    public let candidates: [InstalledFileCandidate]
    /// The first candidate that exists; nil when none does.
    public let found: InstalledFileCandidate?

    /// What to use: the path found, or when none was, the first one tried (the setting's value,
    /// or the checkout path), so a later warning names it.
    public var path: String { found?.path ?? candidates[0].path }

    /// For the refusal to start: names every path tried and the setting that fixes it.
    public var missingMessage: String {
        let variable = ServerConfiguration.environmentPrefix
            + file.settingKey.uppercased().replacingOccurrences(of: "-", with: "_")
        let kind = file.isDirectory ? "a folder" : "a file"
        if case .setting = candidates.first?.source, candidates.count == 1 {
            return "\(file.title) \(candidates[0]) is not \(kind) that exists. "
                + "Fix --\(file.settingKey) or \(variable) to name it."
        }
        return "\(file.title) was not found; looked in \(candidates.map(\.description).joined(separator: ", ")). "
            + "Install it there, or set --\(file.settingKey) or \(variable) to where it is."
    }
}

/// Finds the files no setting names, by one rule: the working directory (a source checkout),
/// then `share/retrorapid` under the executable's prefix, then `/usr/share/retrorapid`; the
/// first that exists wins. A path a setting names is used as given, never searched for.
///
/// Pure apart from `exists`, so tests drive every layout without touching the disk.
public struct InstalledFileLocator: Sendable {
    /// Absolute; relative checkout paths are joined to it.
    public var workingDirectory: String
    /// The folder of the running executable with symlinks resolved (`/proc/self/exe`), so a
    /// link in /usr/local/bin to /opt/retrorapid/bin/retrorapid finds /opt/retrorapid/share.
    /// Nil when unknown: that step is skipped.
    public var executableDirectory: String?
    public var systemShare: String
    /// Whether `path` exists and is a folder (`isDirectory`) or a file that is not a folder.
    public var exists: @Sendable (_ path: String, _ isDirectory: Bool) -> Bool

    public static let defaultSystemShare = "/usr/share/retrorapid"

    public init(workingDirectory: String, executableDirectory: String?, systemShare: String = defaultSystemShare,
                exists: @escaping @Sendable (_ path: String, _ isDirectory: Bool) -> Bool) {
        self.workingDirectory = workingDirectory
        self.executableDirectory = executableDirectory
        self.systemShare = systemShare
        self.exists = exists
    }

    /// This process: its working directory, its executable, the real file system.
    public static func forProcess() -> Self {
        Self(workingDirectory: FileManager.default.currentDirectoryPath,
             executableDirectory: runningExecutablePath().map { URL(fileURLWithPath: $0).deletingLastPathComponent().path },
             exists: { path, isDirectory in
                 var directory: ObjCBool = false
                 return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue == isDirectory
             })
    }

    /// The executable's real path. Linux's /proc/self/exe is the file the kernel ran, links
    /// resolved, whatever argv[0] says; elsewhere, Foundation's guess from argv[0].
    static func runningExecutablePath() -> String? {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return Bundle.main.executableURL?.resolvingSymlinksInPath().path
    }

    /// Where `file` is looked for when no setting names it, in order.
    public func candidates(for file: InstalledFile) -> [InstalledFileCandidate] {
        var candidates = [InstalledFileCandidate(source: .workingDirectory, path: join(workingDirectory, file.checkoutPath))]
        if let executableDirectory {
            let share = URL(fileURLWithPath: executableDirectory).deletingLastPathComponent()
                .appendingPathComponent("share/retrorapid").appendingPathComponent(file.installedName).standardizedFileURL.path
            candidates.append(InstalledFileCandidate(source: .executablePrefix, path: share))
        }
        candidates.append(InstalledFileCandidate(source: .system, path: join(systemShare, file.installedName)))
        // A prefix of /usr is the system's share folder: one look is enough.
        var seen: Set<String> = []
        return candidates.filter { seen.insert($0.path).inserted }
    }

    /// `setting` is the configured path and where it was set, or nil when no source set it.
    public func locate(_ file: InstalledFile, setting: (path: String, source: String)?) -> InstalledFileLocation {
        let candidates = setting.map { [InstalledFileCandidate(source: .setting($0.source), path: $0.path)] }
            ?? candidates(for: file)
        let found = candidates.first { exists(absolute($0.path), file.isDirectory) }
        return InstalledFileLocation(file: file, candidates: candidates, found: found)
    }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : join(workingDirectory, path)
    }

    private func join(_ folder: String, _ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: folder).appendingPathComponent(path).standardizedFileURL.path
    }
}
