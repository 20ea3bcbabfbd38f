import Testing
@testable import RetroRapidSupport

/// The rule for finding the Web client, migrations, fonts and OpenAPI document, on imagined
/// file systems: a setting is used as given; otherwise the working directory, the executable's
/// prefix, then /usr/share/retrorapid, the first that exists winning.
@Suite struct InstalledFileLocatorTests {
    /// A locator over a file system holding exactly `folders` and `files`.
    func locator(folders: Set<String> = [], files: Set<String> = [], executable: String? = "/opt/rr/bin") -> InstalledFileLocator {
        InstalledFileLocator(workingDirectory: "/home/op", executableDirectory: executable) { path, isDirectory in
            isDirectory ? folders.contains(path) : files.contains(path)
        }
    }

    @Test func candidatesRunFromTheCheckoutToThePrefixToTheSystem() {
        let candidates = locator().candidates(for: .webRoot)
        #expect(candidates == [
            InstalledFileCandidate(source: .workingDirectory, path: "/home/op/Web"),
            InstalledFileCandidate(source: .executablePrefix, path: "/opt/rr/share/retrorapid/web"),
            InstalledFileCandidate(source: .system, path: "/usr/share/retrorapid/web"),
        ])
        #expect(locator().candidates(for: .migrations).map(\.path)
            == ["/home/op/Migrations", "/opt/rr/share/retrorapid/migrations", "/usr/share/retrorapid/migrations"])
        #expect(locator().candidates(for: .fonts).map(\.path)
            == ["/home/op/data/fonts", "/opt/rr/share/retrorapid/fonts", "/usr/share/retrorapid/fonts"])
        #expect(locator().candidates(for: .openAPI).map(\.path)
            == ["/home/op/docs/openapi.json", "/opt/rr/share/retrorapid/openapi.json", "/usr/share/retrorapid/openapi.json"])
    }

    @Test func theFirstThatExistsWins() {
        let both = locator(folders: ["/opt/rr/share/retrorapid/web", "/usr/share/retrorapid/web"])
        #expect(both.locate(.webRoot, setting: nil).found?.source == .executablePrefix)
        #expect(both.locate(.webRoot, setting: nil).path == "/opt/rr/share/retrorapid/web")
        let checkout = locator(folders: ["/home/op/Web", "/opt/rr/share/retrorapid/web"])
        #expect(checkout.locate(.webRoot, setting: nil).path == "/home/op/Web")
        let system = locator(folders: ["/usr/share/retrorapid/migrations"])
        #expect(system.locate(.migrations, setting: nil).found?.source == .system)
    }

    @Test func aFolderIsNotAFileNorAFileAFolder() {
        // An openapi.json that is a folder, a Web that is a file: neither counts.
        let wrongKinds = locator(folders: ["/home/op/docs/openapi.json"], files: ["/home/op/Web", "/usr/share/retrorapid/openapi.json"])
        #expect(wrongKinds.locate(.webRoot, setting: nil).found == nil)
        #expect(wrongKinds.locate(.openAPI, setting: nil).found?.source == .system)
    }

    @Test func aSettingIsUsedAsGivenAndNeverSearchedPast() {
        let everywhere = locator(folders: ["/home/op/Web", "/srv/web"])
        let set = everywhere.locate(.webRoot, setting: (path: "/srv/web", source: "--web-root"))
        #expect(set.candidates == [InstalledFileCandidate(source: .setting("--web-root"), path: "/srv/web")])
        #expect(set.path == "/srv/web" && set.found != nil)
        // A wrong setting is not rescued by the checkout's folder: it is reported.
        let wrong = everywhere.locate(.webRoot, setting: (path: "/srv/wbe", source: "environment variable RETRORAPID_WEB_ROOT"))
        #expect(wrong.found == nil && wrong.path == "/srv/wbe")
        #expect(wrong.missingMessage == "the Web client folder /srv/wbe (set by environment variable RETRORAPID_WEB_ROOT) is not "
            + "a folder that exists. Fix --web-root or RETRORAPID_WEB_ROOT to name it.")
    }

    @Test func aRelativeSettingIsCheckedAgainstTheWorkingDirectoryAndKeptAsGiven() {
        let found = locator(folders: ["/home/op/site"]).locate(.webRoot, setting: (path: "site", source: "--web-root"))
        #expect(found.found != nil && found.path == "site")
    }

    @Test func nothingFoundNamesEveryPlaceAndTheSetting() {
        let location = locator().locate(.migrations, setting: nil)
        #expect(location.found == nil)
        #expect(location.path == "/home/op/Migrations")
        #expect(location.missingMessage == "the migrations folder was not found; looked in /home/op/Migrations (in the working "
            + "directory), /opt/rr/share/retrorapid/migrations (next to the executable), /usr/share/retrorapid/migrations "
            + "(the system's share folder). Install it there, or set --migrations-path or RETRORAPID_MIGRATIONS_PATH to where it is.")
    }

    @Test func anExecutableInUsrBinLooksInTheSystemFolderOnce() {
        let candidates = locator(executable: "/usr/bin").candidates(for: .fonts)
        #expect(candidates.map(\.path) == ["/home/op/data/fonts", "/usr/share/retrorapid/fonts"])
        #expect(locator(executable: nil).candidates(for: .fonts).map(\.source) == [.workingDirectory, .system])
    }

    @Test func onlyTheWebClientAndTheMigrationsAreRequired() {
        #expect(InstalledFile.allCases.filter(\.isRequired) == [.webRoot, .migrations])
    }

    // MARK: - With the configuration

    func located(_ arguments: [String] = [], environment: [String: String] = [:], file: String? = nil,
                 locator: InstalledFileLocator) throws -> LocatedConfiguration {
        try ServerConfiguration.load(arguments: arguments, environment: environment, envFileContents: file, locator: locator)
    }

    @Test func unsetPathsAreFilledFromTheLookupAndSetOnesKept() throws {
        let installed = locator(folders: ["/opt/rr/share/retrorapid/web", "/opt/rr/share/retrorapid/migrations", "/data/fonts"],
                                files: ["/opt/rr/share/retrorapid/openapi.json"])
        let result = try located(["--fonts-path", "/data/fonts"], locator: installed)
        #expect(result.configuration.webRoot == "/opt/rr/share/retrorapid/web")
        #expect(result.configuration.migrationsPath == "/opt/rr/share/retrorapid/migrations")
        #expect(result.configuration.openAPIPath == "/opt/rr/share/retrorapid/openapi.json")
        #expect(result.configuration.fontsPath == "/data/fonts")
        #expect(result.location(of: .fonts).found?.source == .setting("--fonts-path"))
        try result.require([.webRoot, .migrations])
    }

    @Test func everySourceCountsAsSettingAPath() throws {
        let empty = locator(folders: ["/home/op/Web"])
        let fromEnvironment = try located(environment: ["RETRORAPID_WEB_ROOT": "/srv/web"], locator: empty)
        #expect(fromEnvironment.location(of: .webRoot).candidates.map(\.source) == [.setting("environment variable RETRORAPID_WEB_ROOT")])
        let fromFile = try located(file: "RETRORAPID_OPENAPI_PATH=/srv/openapi.json\n", locator: empty)
        #expect(fromFile.location(of: .openAPI).candidates
            == [InstalledFileCandidate(source: .setting("env file line 1: RETRORAPID_OPENAPI_PATH"), path: "/srv/openapi.json")])
        #expect(fromFile.configuration.openAPIPath == "/srv/openapi.json")
    }

    @Test func aMissingRequiredFileIsRefusedByName() throws {
        let webOnly = locator(folders: ["/home/op/Web"])
        let result = try located(locator: webOnly)
        #expect(throws: InstalledFileMissing(location: result.location(of: .migrations))) {
            try result.require([.webRoot, .migrations])
        }
        // Optional files missing refuse nothing; their checkout paths stay for the warning.
        try result.require([.webRoot])
        #expect(result.configuration.fontsPath == "/home/op/data/fonts")
    }

    @Test func helpDescribesTheLookupForEachPathSetting() {
        let help = ServerConfiguration.helpText
        #expect(help.contains("--openapi-path FILE   (env RETRORAPID_OPENAPI_PATH)"))
        #expect(help.contains("Default: Web.\n      When unset: the first that exists of Web, <prefix>/share/retrorapid/web, "
            + "/usr/share/retrorapid/web."))
        #expect(help.contains("When unset: the first that exists of docs/openapi.json, <prefix>/share/retrorapid/openapi.json, "
            + "/usr/share/retrorapid/openapi.json."))
        #expect(!help.contains("When unset: the first that exists of data/retrorapid.sqlite"))
    }
}
