/// A configuration whose file paths are settled: each one a source set is as given, each other
/// is where `InstalledFileLocator` found it (or its checkout default when nowhere). Kept with
/// where every file came from, so `serve` can log it and a missing one can be named.
public struct LocatedConfiguration: Sendable {
    public var configuration: ServerConfiguration
    /// One per `InstalledFile`, in `allCases` order.
    public let files: [InstalledFileLocation]

    init(_ loaded: ServerConfiguration, origins: [String: ConfigurationError.Source], locator: InstalledFileLocator) {
        var configuration = loaded
        files = InstalledFile.allCases.map { file in
            let setting = ServerConfiguration.setting(file.settingKey)
            let origin = origins[file.settingKey].map {
                (path: loaded[keyPath: file.keyPath], source: $0.subject(setting.environmentName))
            }
            let location = locator.locate(file, setting: origin)
            configuration[keyPath: file.keyPath] = location.path
            return location
        }
        self.configuration = configuration
    }

    public func location(of file: InstalledFile) -> InstalledFileLocation {
        files.first { $0.file == file }!
    }

    /// Throws for the first of `needed` that was not found, naming where it was looked for.
    public func require(_ needed: [InstalledFile]) throws(InstalledFileMissing) {
        for file in needed {
            let location = location(of: file)
            if location.found == nil { throw InstalledFileMissing(location: location) }
        }
    }
}

/// A file a command cannot run without (`InstalledFile.isRequired`) is not where it was looked for.
public struct InstalledFileMissing: Error, Sendable, Equatable, CustomStringConvertible {
    public let location: InstalledFileLocation
    public var description: String { location.missingMessage }
}
