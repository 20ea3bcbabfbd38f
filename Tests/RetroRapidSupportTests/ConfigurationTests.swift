import Testing
@testable import RetroRapidSupport

@Suite struct ConfigurationTests {
    func load(
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        file: String? = nil
    ) throws -> ServerConfiguration {
        try ServerConfiguration.load(arguments: arguments, environment: environment, envFileContents: file)
    }

    func loadError(
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        file: String? = nil
    ) -> ConfigurationError? {
        #expect(throws: ConfigurationError.self) {
            try load(arguments, environment: environment, file: file)
        }
    }

    // MARK: Defaults and precedence

    @Test func noSourcesGiveTheDocumentedDefaults() throws {
        let configuration = try load()
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 8080)
        #expect(configuration.databasePath == "data/retrorapid.sqlite")
        #expect(configuration.webRoot == "Web")
        #expect(configuration.tlsCertificatePath == nil)
        #expect(configuration.tlsKeyPath == nil)
        #expect(configuration.logLevel == .info)
        #expect(configuration.logFormat == .text)
        #expect(configuration.dailyFreePlays == 5)
        #expect(configuration.unlimitedPriceMinorUnits == 299)
        #expect(configuration.currency == "GBP")
        #expect(configuration.latencyGraceMilliseconds == 150)
        #expect(configuration.disconnectGraceSeconds == 60)
        #expect(configuration.maxMessageBytes == 4096)
        #expect(configuration.maxConnectionsPerIP == 64)
        #expect(configuration.helloTimeoutSeconds == 10)
        #expect(configuration.websocketIdleTimeoutSeconds == 900)
        #expect(configuration.websocketMaxQueuedMessages == 100)
        #expect(configuration.trustedProxies == [])
        #expect(configuration.webhookSecret == nil)
        #expect(configuration.metricsEnabled == true)
    }

    @Test func laterSourcesWinDefaultsThenFileThenEnvironmentThenFlags() throws {
        let file = "RETRORAPID_PORT=1001\nRETRORAPID_HOST=file.example\nRETRORAPID_DAILY_FREE_PLAYS=7\n"
        let environment = ["RETRORAPID_PORT": "1002", "RETRORAPID_HOST": "env.example"]
        let flags = ["--port", "1003"]

        let fileOnly = try load(file: file)
        #expect((fileOnly.port, fileOnly.host, fileOnly.dailyFreePlays) == (1001, "file.example", 7))

        let fileAndEnvironment = try load(environment: environment, file: file)
        #expect((fileAndEnvironment.port, fileAndEnvironment.host, fileAndEnvironment.dailyFreePlays) == (1002, "env.example", 7))

        let all = try load(flags, environment: environment, file: file)
        #expect((all.port, all.host, all.dailyFreePlays) == (1003, "env.example", 7))
        #expect(all.webRoot == "Web")
    }

    @Test func everySettingCanBeSetByFlag() throws {
        let configuration = try load([
            "--host", "127.0.0.1", "--port=9000", "--database-path", "/var/lib/rr.sqlite", "--web-root", "/srv/web",
            "--tls-certificate-path", "cert.pem", "--tls-key-path", "key.pem", "--log-level", "debug",
            "--log-format", "json", "--daily-free-plays", "0", "--unlimited-price-minor-units", "499",
            "--currency", "EUR", "--latency-grace-milliseconds", "80", "--disconnect-grace-seconds", "30",
            "--max-message-bytes", "8192", "--max-connections-per-ip", "8", "--hello-timeout-seconds", "5",
            "--websocket-idle-timeout-seconds", "600", "--websocket-max-queued-messages", "50",
            "--trusted-proxies", "10.0.0.2,10.0.0.3", "--webhook-secret", "s3cret",
            "--metrics-enabled", "false",
        ])
        var expected = ServerConfiguration()
        expected.host = "127.0.0.1"
        expected.port = 9000
        expected.databasePath = "/var/lib/rr.sqlite"
        expected.webRoot = "/srv/web"
        expected.tlsCertificatePath = "cert.pem"
        expected.tlsKeyPath = "key.pem"
        expected.logLevel = .debug
        expected.logFormat = .json
        expected.dailyFreePlays = 0
        expected.unlimitedPriceMinorUnits = 499
        expected.currency = "EUR"
        expected.latencyGraceMilliseconds = 80
        expected.disconnectGraceSeconds = 30
        expected.maxMessageBytes = 8192
        expected.maxConnectionsPerIP = 8
        expected.helloTimeoutSeconds = 5
        expected.websocketIdleTimeoutSeconds = 600
        expected.websocketMaxQueuedMessages = 50
        expected.trustedProxies = ["10.0.0.2", "10.0.0.3"]
        expected.webhookSecret = "s3cret"
        expected.metricsEnabled = false
        #expect(configuration == expected)
    }

    @Test func environmentNamesAreUpperSnakeCaseWithThePrefix() throws {
        let configuration = try load(environment: [
            "RETRORAPID_DATABASE_PATH": "db.sqlite",
            "RETRORAPID_DAILY_FREE_PLAYS": "9",
            "RETRORAPID_MAX_CONNECTIONS_PER_IP": "3",
            "RETRORAPID_LOG_LEVEL": "WARNING",
            "RETRORAPID_METRICS_ENABLED": "off",
        ])
        #expect(configuration.databasePath == "db.sqlite")
        #expect(configuration.dailyFreePlays == 9)
        #expect(configuration.maxConnectionsPerIP == 3)
        #expect(configuration.logLevel == .warning)
        #expect(configuration.metricsEnabled == false)
    }

    @Test func environmentVariablesThatAreNotSettingsAreIgnored() throws {
        let configuration = try load(environment: ["PATH": "/usr/bin", "RETRORAPID_ENV_FILE": "other.env", "PORT": "1"])
        #expect(configuration == ServerConfiguration())
    }

    @Test func anEmptyValueUnsetsAnOptionalSettingFromAnEarlierSource() throws {
        let file = "RETRORAPID_TLS_CERTIFICATE_PATH=cert.pem\nRETRORAPID_TLS_KEY_PATH=key.pem\nRETRORAPID_WEBHOOK_SECRET=abc"
        let configuration = try load(
            environment: ["RETRORAPID_TLS_CERTIFICATE_PATH": "", "RETRORAPID_TLS_KEY_PATH": "", "RETRORAPID_WEBHOOK_SECRET": ""],
            file: file
        )
        #expect(configuration.tlsCertificatePath == nil)
        #expect(configuration.tlsKeyPath == nil)
        #expect(configuration.webhookSecret == nil)
    }

    // MARK: Trusted proxies

    @Test func trustedProxiesAreAListOfAddressesInOneSpellingEach() throws {
        let configuration = try load(["--trusted-proxies", " 10.0.0.2, 2001:DB8:0::1 ,::ffff:192.0.2.7,10.0.0.2"])
        #expect(configuration.trustedProxies == ["10.0.0.2", "2001:db8::1", "192.0.2.7"])
        #expect(configuration.description.contains("trusted-proxies=10.0.0.2,2001:db8::1,192.0.2.7"))
    }

    @Test func anEmptyTrustedProxiesListTrustsNone() throws {
        let configuration = try load(environment: ["RETRORAPID_TRUSTED_PROXIES": ""], file: "RETRORAPID_TRUSTED_PROXIES=10.0.0.2")
        #expect(configuration.trustedProxies == [])
    }

    @Test func aTrustedProxyThatIsNotAnAddressIsRefused() {
        for value in ["proxy.internal", "10.0.0.0/8", "10.0.0.2,,10.0.0.3", "10.0.0.256", "10.0.0.2:8080"] {
            let error = loadError(["--trusted-proxies", value])
            #expect(error?.setting == "trusted-proxies", "\(value)")
            #expect(error?.message.contains("comma-separated numeric IPv4 or IPv6 addresses") == true, "\(value)")
        }
    }

    // MARK: Allowed origins

    @Test func allowedOriginsAreKeptAsBrowsersWriteThem() throws {
        let configuration = try load(["--allowed-origins", " HTTPS://Game.Example.com:443, http://localhost:8080,https://game.example.com"])
        #expect(configuration.allowedOrigins == ["https://game.example.com", "http://localhost:8080"])
        #expect(configuration.description.contains("allowed-origins=https://game.example.com,http://localhost:8080"))
        #expect(try load([]).allowedOrigins == [])
        #expect(try load(environment: ["RETRORAPID_ALLOWED_ORIGINS": ""], file: "RETRORAPID_ALLOWED_ORIGINS=https://a.example").allowedOrigins == [])
    }

    @Test func anAllowedOriginThatIsNotAnOriginIsRefused() {
        for value in ["game.example.com", "https://game.example.com/", "https://game.example.com/play", "ftp://files.example",
                      "null", "https://", "https://a.example:0", "https://a.example:99999", "https://user@a.example", "https://a.example,,https://b.example"] {
            let error = loadError(["--allowed-origins", value])
            #expect(error?.setting == "allowed-origins", "\(value)")
            #expect(error?.message.contains("https://game.example.com") == true, "\(value)")
        }
    }

    // MARK: Game URLs and the cluster's timing

    @Test func aGameURLIsKeptWithItsSchemeAndHostInLowerCaseAndItsOriginAllowedToPages() throws {
        let configuration = try load(["--game-url", "WSS://A.Play.Example.com:8443/ws", "--game-url-sources",
                                      " wss://*.Play.Example.com, ws://10.0.0.12:8080,wss://*.play.example.com"])
        #expect(configuration.gameURL == "wss://a.play.example.com:8443/ws")
        #expect(configuration.gameURLSources == ["wss://*.play.example.com", "ws://10.0.0.12:8080"])
        #expect(GameURL("wss://a.play.example.com:8443/ws")?.connectSource == "wss://a.play.example.com:8443")
        #expect(GameURL("ws://[::1]:9000")?.description == "ws://[::1]:9000/")
        #expect(try load(["--game-url", ""]).gameURL == nil)
        #expect(try load([]).gameURL == nil && load([]).gameURLSources.isEmpty)
    }

    @Test func aGameURLThatABrowserCouldNotUseOrThatCarriesMoreThanAnAddressIsRefused() {
        let long = "wss://a.example/" + String(repeating: "x", count: 200)
        for value in ["https://a.example/ws", "a.example/ws", "wss://", "wss://user@a.example/ws", "wss://a.example/ws?x=1",
                      "wss://a.example/ws#f", "wss://a.example:0/ws", "wss://a.example/w s", "wss://a.example/\"x", "wss://a.example/<b>",
                      "wss://*.example/ws", long] {
            let error = loadError(["--game-url", value])
            #expect(error?.setting == "game-url", "\(value)")
        }
        for value in ["https://a.example", "wss://a.example/ws", "wss://*.[::1]", "wss://*", "*.example", "wss://a.example,,wss://b.example"] {
            #expect(loadError(["--game-url-sources", value])?.setting == "game-url-sources", "\(value)")
        }
    }

    @Test func theLeaseIsAtLeastThreeHeartbeatsAndEachIsBounded() throws {
        let defaults = try load([])
        #expect((defaults.clusterHeartbeatSeconds, defaults.clusterLeaseSeconds) == (2, 6))
        let longer = try load(["--cluster-heartbeat-seconds", "5", "--cluster-lease-seconds", "15"])
        #expect((longer.clusterHeartbeatSeconds, longer.clusterLeaseSeconds) == (5, 15))
        let short = loadError(["--cluster-heartbeat-seconds", "3"])
        #expect(short?.setting == "cluster-heartbeat-seconds" && short?.message.contains("at least three") == true)
        #expect(loadError(["--cluster-lease-seconds", "5"])?.setting == "cluster-lease-seconds")
        #expect(loadError(["--cluster-heartbeat-seconds", "0"])?.setting == "cluster-heartbeat-seconds")
        #expect(loadError(["--cluster-lease-seconds", "121"])?.setting == "cluster-lease-seconds")
    }

    @Test func webOriginsCompareWithAHostHeader() throws {
        let plain = try #require(WebOrigin("http://localhost:8080"))
        #expect(plain.isSameSite(asHost: "localhost:8080") && plain.isSameSite(asHost: "LOCALHOST:8080"))
        #expect(!plain.isSameSite(asHost: "localhost:8081") && !plain.isSameSite(asHost: "localhost"))
        let secure = try #require(WebOrigin("https://game.example.com"))
        #expect(secure.isSameSite(asHost: "game.example.com") && secure.isSameSite(asHost: "game.example.com:443"))
        #expect(!secure.isSameSite(asHost: "game.example.com:8443") && !secure.isSameSite(asHost: "evil.example"))
        #expect(!secure.isSameSite(asHost: "game.example.com.evil.example"))
        let v6 = try #require(WebOrigin("http://[::1]:8080"))
        #expect(v6.isSameSite(asHost: "[::1]:8080") && !v6.isSameSite(asHost: "[::2]:8080"))
        #expect(secure.webSocketForm == "wss://game.example.com" && plain.webSocketForm == "ws://localhost:8080")
        #expect(WebOrigin("null") == nil && WebOrigin("file://") == nil && WebOrigin("chrome-extension://abc") == nil)
    }

    @Test func timeoutsAndTheQueueBoundHaveSaneRanges() {
        #expect(loadError(["--hello-timeout-seconds", "0"])?.setting == "hello-timeout-seconds")
        #expect(loadError(["--websocket-idle-timeout-seconds", "0"])?.setting == "websocket-idle-timeout-seconds")
        #expect(loadError(["--websocket-max-queued-messages", "7"])?.setting == "websocket-max-queued-messages")
    }

    @Test func storageThreadsAreOneByDefaultAndFromOneToThirtyTwo() throws {
        #expect(ServerConfiguration().storageThreads == 1)
        #expect(try load(["--storage-threads", "4"]).storageThreads == 4)
        #expect(try load(environment: ["RETRORAPID_STORAGE_THREADS": "32"]).storageThreads == 32)
        for bad in ["0", "33", "-1", "two", ""] {
            let error = loadError(["--storage-threads", bad])
            #expect(error?.setting == "storage-threads", "\(bad)")
            #expect(error?.description == "--storage-threads expects a whole number from 1 to 32, got '\(bad)'", "\(bad)")
        }
        #expect(loadError(environment: ["RETRORAPID_STORAGE_THREADS": "0"])?.setting == "storage-threads")
    }

    @Test func rateLimitsAreCountSlashSecondsWithTheDocumentedDefaults() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.newPlayersPerAddress == RateLimit(60, per: .seconds(600)))
        #expect(defaults.newPlayersPerServer == RateLimit(600, per: .seconds(600)))
        #expect(defaults.failedLinkClaimsPerAddress == RateLimit(20, per: .seconds(600)))
        #expect(defaults.failedCodesPerPlayer == RateLimit(5, per: .seconds(600)))
        #expect(defaults.failedCodesPerAddress == RateLimit(30, per: .seconds(600)))
        #expect(defaults.failedSignInsPerAddress == RateLimit(100, per: .seconds(600)))
        let configuration = try load(["--failed-codes-per-player", "3/60"],
                                     environment: ["RETRORAPID_FAILED_SIGN_INS_PER_ADDRESS": "1000/3600"])
        #expect(configuration.failedCodesPerPlayer == RateLimit(3, per: .seconds(60)))
        #expect(configuration.failedSignInsPerAddress == RateLimit(1000, per: .seconds(3600)))
        #expect(configuration.failedSignInsPerAddress.sentence == "1000 in any hour")
        for bad in ["3", "3/", "/60", "0/60", "3/0", "3/86401", "100001/60", "-1/60", "3/60s", "3/60/2", "+3/60", "3 / 60"] {
            let error = loadError(["--failed-codes-per-player", bad])
            #expect(error?.setting == "failed-codes-per-player", "\(bad)")
            #expect(error?.message.contains("expects COUNT/SECONDS") == true, "\(bad)")
        }
        #expect(ServerConfiguration.helpText.contains("--failed-codes-per-player COUNT/SECONDS"))
        #expect(ServerConfiguration.helpText.contains("Default: 5/600."))
    }

    // MARK: Env file syntax

    @Test func envFileSkipsCommentsAndBlankLinesAndAcceptsExport() throws {
        let configuration = try load(file: """
            # RetroRapid settings

            export RETRORAPID_PORT=9100
              # indented comment
            export   RETRORAPID_HOST = 10.0.0.1\u{20}\u{20}
            RETRORAPID_WEB_ROOT=public # trailing comment
            """)
        #expect(configuration.port == 9100)
        #expect(configuration.host == "10.0.0.1")
        #expect(configuration.webRoot == "public")
    }

    @Test func envFileDoubleQuotesKeepSpacesHashesAndUnderstandEscapes() throws {
        let configuration = try load(file: #"RETRORAPID_WEBHOOK_SECRET="a #b \"c\" \\d\te" # comment"#)
        #expect(configuration.webhookSecret == "a #b \"c\" \\d\te")
    }

    @Test func envFileSingleQuotesAreLiteral() throws {
        let configuration = try load(file: #"RETRORAPID_DATABASE_PATH='C:\data\my games #1.sqlite'"#)
        #expect(configuration.databasePath == #"C:\data\my games #1.sqlite"#)
    }

    @Test func envFileHashInsideAnUnquotedWordIsPartOfTheValue() throws {
        let configuration = try load(file: "RETRORAPID_WEBHOOK_SECRET=abc#def")
        #expect(configuration.webhookSecret == "abc#def")
    }

    @Test func envFileAcceptsWindowsLineEndings() throws {
        let configuration = try load(file: "RETRORAPID_PORT=9200\r\nRETRORAPID_CURRENCY=USD\r\n")
        #expect(configuration.port == 9200)
        #expect(configuration.currency == "USD")
    }

    @Test func envFileIgnoresVariablesThatAreNotOurs() throws {
        let configuration = try load(file: "POSTGRES_PASSWORD=x\nRETRORAPID_PORT=9300")
        #expect(configuration.port == 9300)
    }

    @Test func envFileUnknownRetroRapidVariableNamesTheLine() {
        let error = loadError(file: "RETRORAPID_PORT=9000\n\nRETRORAPID_PROT=9001")
        #expect(error?.source == .envFile(path: "env file", line: 3))
        #expect(error?.setting == nil)
        #expect(error?.description == "env file line 3: RETRORAPID_PROT is not a setting; run with --help to list them")
    }

    @Test func envFileLineWithoutEqualsNamesTheLine() {
        let error = loadError(file: "# ok\nRETRORAPID_PORT 9000")
        #expect(error?.source == .envFile(path: "env file", line: 2))
        #expect(error?.description.contains("expected KEY=VALUE") == true)
    }

    @Test func envFileUnterminatedQuoteNamesTheLine() {
        let error = loadError(file: "RETRORAPID_HOST=\"localhost")
        #expect(error?.source == .envFile(path: "env file", line: 1))
        #expect(error?.description.contains("never closes") == true)
    }

    @Test func envFileTextAfterAClosingQuoteIsRejected() {
        let error = loadError(file: "RETRORAPID_HOST='local' host")
        #expect(error?.description == "env file line 1: unexpected 'host' after the closing ' quote")
    }

    @Test func envFileBadVariableNameIsRejected() {
        let error = loadError(file: "RETRORAPID-PORT=1")
        #expect(error?.source == .envFile(path: "env file", line: 1))
        #expect(error?.description.contains("'RETRORAPID-PORT' is not a variable name") == true)
    }

    @Test func envFileDuplicateNamesBothLines() {
        let error = loadError(file: "RETRORAPID_PORT=1\nRETRORAPID_HOST=h\nRETRORAPID_PORT=2")
        #expect(error?.source == .envFile(path: "env file", line: 3))
        #expect(error?.description.contains("already set on line 1") == true)
    }

    @Test func envFileCannotPointAtAnotherEnvFile() {
        let error = loadError(file: "RETRORAPID_ENV_FILE=other.env")
        #expect(error?.description.contains("only works in the process environment") == true)
    }

    @Test func envFileErrorsUseThePathTheyWereReadFrom() {
        let error = #expect(throws: ConfigurationError.self) {
            try ServerConfiguration.load(arguments: [], environment: [:], envFile: ("deploy/prod.env", "\nRETRORAPID_PORT=abc"))
        }
        #expect(error?.source == .envFile(path: "deploy/prod.env", line: 2))
        #expect(error?.description == "deploy/prod.env line 2: RETRORAPID_PORT expects a whole number from 0 to 65535, got 'abc'")
    }

    // MARK: Bad values name their source

    @Test func badPortFlagNamesTheFlagAndTheRange() {
        let error = loadError(["--port", "abc"])
        #expect(error?.source == .flag("--port"))
        #expect(error?.setting == "port")
        #expect(error?.description == "--port expects a whole number from 0 to 65535, got 'abc'")
    }

    @Test func portOutOfRangeInTheEnvironmentNamesTheVariable() {
        let error = loadError(environment: ["RETRORAPID_PORT": "70000"])
        #expect(error?.source == .environment("RETRORAPID_PORT"))
        #expect(error?.description == "environment variable RETRORAPID_PORT expects a whole number from 0 to 65535, got '70000'")
    }

    @Test func negativeFreePlaysInTheFileNamesTheLine() {
        let error = loadError(file: "RETRORAPID_PORT=9000\nRETRORAPID_DAILY_FREE_PLAYS=-1")
        #expect(error?.source == .envFile(path: "env file", line: 2))
        #expect(error?.setting == "daily-free-plays")
        #expect(error?.description == "env file line 2: RETRORAPID_DAILY_FREE_PLAYS expects a whole number from 0 to 1000, got '-1'")
    }

    @Test func badChoiceListsTheAllowedValues() {
        let error = loadError(["--log-format", "xml"])
        #expect(error?.description == "--log-format expects one of text, json, got 'xml'")
        let level = loadError(environment: ["RETRORAPID_LOG_LEVEL": "verbose"])
        #expect(level?.description.contains("one of trace, debug, info, notice, warning, error, critical") == true)
    }

    @Test func badBooleanAndCurrencyAreRejected() {
        #expect(loadError(["--metrics-enabled", "maybe"])?.setting == "metrics-enabled")
        #expect(loadError(["--currency", "pounds"])?.description == "--currency expects a three-letter ISO 4217 code such as GBP, got 'pounds'")
        #expect(loadError(["--host", "local host"])?.setting == "host")
        #expect(loadError(["--database-path="])?.setting == "database-path")
    }

    @Test func unknownFlagIsNamedWithAHint() {
        let error = loadError(["--prot", "9000"])
        #expect(error?.source == .flag("--prot"))
        #expect(error?.description == "unknown option --prot; run with --help to list the settings")
    }

    @Test func flagWithoutValueAndRepeatedFlagAreRejected() {
        #expect(loadError(["--port"])?.description == "--port needs a value")
        #expect(loadError(["--port", "1", "--port", "2"])?.source == .flag("--port"))
    }

    @Test func positionalArgumentsAreRejected() {
        let error = loadError(["serve"])
        #expect(error?.source == .flag("serve"))
        #expect(error?.description.contains("unexpected argument 'serve'") == true)
    }

    @Test func certificateWithoutKeyNamesWhereTheCertificateCameFrom() {
        let fromFlag = loadError(["--tls-certificate-path", "cert.pem"])
        #expect(fromFlag?.source == .flag("--tls-certificate-path"))
        #expect(fromFlag?.setting == "tls-key-path")
        #expect(fromFlag?.description.hasPrefix("--tls-certificate-path is set but tls-key-path is not") == true)
        #expect(fromFlag?.description.contains("--tls-key-path or RETRORAPID_TLS_KEY_PATH") == true)

        let fromFile = loadError(file: "\nRETRORAPID_TLS_CERTIFICATE_PATH=cert.pem")
        #expect(fromFile?.source == .envFile(path: "env file", line: 2))
    }

    @Test func keyWithoutCertificateIsRejectedToo() {
        let error = loadError(environment: ["RETRORAPID_TLS_KEY_PATH": "key.pem"])
        #expect(error?.source == .environment("RETRORAPID_TLS_KEY_PATH"))
        #expect(error?.setting == "tls-certificate-path")
    }

    @Test func sellingNeedsTheWebhookSecretAndThePublicAddress() throws {
        let noSecret = loadError(["--payment-secret-key", "sk_test_1", "--public-base-url", "https://game.example"])
        #expect(noSecret?.source == .flag("--payment-secret-key") && noSecret?.setting == "webhook-secret")
        let noBase = loadError(environment: ["RETRORAPID_PAYMENT_SECRET_KEY": "sk_test_1", "RETRORAPID_WEBHOOK_SECRET": "whsec_1"])
        #expect(noBase?.source == .environment("RETRORAPID_PAYMENT_SECRET_KEY") && noBase?.setting == "public-base-url")
        let badBase = loadError(["--payment-secret-key", "sk_test_1", "--webhook-secret", "whsec_1", "--public-base-url", "game.example/"])
        #expect(badBase?.setting == "public-base-url")
        let selling = try load(["--payment-secret-key", "sk_test_1", "--webhook-secret", "whsec_1",
                                "--public-base-url", "https://game.example", "--payment-timeout-seconds", "3"])
        #expect(selling.paymentSecretKey == "sk_test_1" && selling.paymentTimeoutSeconds == 3)
        #expect(selling.paymentProviderURL == "https://api.stripe.com")
        #expect(!selling.description.contains("sk_test_1"))
        // Without a key nothing is sold and nothing else is required.
        #expect(try load(["--public-base-url", "https://game.example"]).paymentSecretKey == nil)
    }

    @Test func theClusterSecretIsMaskedNeverRepeatedAndAtLeast32Characters() throws {
        let secret = "Zq3vL8wT1xN6cR0bK5mH9jD2fY7gS4aP-Ue0="
        let configuration = try load(["--database-url", "postgres://db/rr", "--cluster-secret", secret],
                                     environment: ["RETRORAPID_CLUSTER_SECRET_PREVIOUS": secret + "old"])
        #expect(configuration.clusterSecret == secret && configuration.clusterSecretPrevious == secret + "old")
        #expect(!configuration.description.contains(secret))
        #expect(configuration.description.contains("cluster-secret=(secret)"))
        #expect(configuration.description.contains("cluster-secret-previous=(secret)"))
        #expect(ServerConfiguration.helpText.contains("--cluster-secret SECRET   (env RETRORAPID_CLUSTER_SECRET)"))

        let short = "too-short-secret-of-31-chars-xx"
        let refused = loadError(environment: ["RETRORAPID_CLUSTER_SECRET": short])
        #expect(refused?.setting == "cluster-secret" && refused?.source == .environment("RETRORAPID_CLUSTER_SECRET"))
        #expect(refused?.message == "environment variable RETRORAPID_CLUSTER_SECRET expects a cluster secret of at least 32 "
                    + "characters, got 31; make one with `openssl rand -base64 48`")
        let spaced = loadError(file: "RETRORAPID_CLUSTER_SECRET=\"\(secret) \(secret)\"")
        #expect(spaced?.message.hasSuffix("expects a cluster secret without spaces or control characters") == true)
        for error in [refused, spaced] {
            #expect(error.map { !$0.message.contains(short) && !$0.message.contains(secret) } == true)
        }
        // An empty value unsets it, as for the other secrets.
        #expect(try load(["--cluster-secret", ""], environment: ["RETRORAPID_CLUSTER_SECRET": secret]).clusterSecret == nil)
    }

    @Test func thePreviousClusterSecretIsOnlyEverASecondOne() {
        let secret = "Zq3vL8wT1xN6cR0bK5mH9jD2fY7gS4aP-Ue0="
        let alone = loadError(["--cluster-secret-previous", secret])
        #expect(alone?.setting == "cluster-secret" && alone?.source == .flag("--cluster-secret-previous"))
        let same = loadError(["--cluster-secret", secret, "--cluster-secret-previous", secret])
        #expect(same?.setting == "cluster-secret-previous")
        #expect(same.map { !$0.message.contains(secret) } == true)
        #expect(ServerConfiguration.missingClusterSecretMessage.contains("RETRORAPID_CLUSTER_SECRET"))
    }

    @Test func theProviderURLMustBeABaseToAppendPathsTo() {
        for good in ["https://api.stripe.com", "http://127.0.0.1:12111", "http://localhost:9"] {
            #expect(ServerConfiguration.isProviderURL(good), "\(good)")
        }
        // The secret key must not cross a network in clear text.
        #expect(ServerConfiguration.isBaseURL("http://api.stripe.com") && !ServerConfiguration.isProviderURL("http://api.stripe.com"))
        for bad in ["api.stripe.com", "https://api.stripe.com/", "ftp://x.example", "https://x.example?a=1", "https://", "http://pay.example"] {
            #expect(!ServerConfiguration.isProviderURL(bad), "\(bad)")
            #expect(loadError(["--payment-provider-url", bad])?.setting == "payment-provider-url", "\(bad)")
        }
    }

    @Test func certificateAndKeyFromDifferentSourcesAreAPair() throws {
        let configuration = try load(["--tls-key-path", "key.pem"], file: "RETRORAPID_TLS_CERTIFICATE_PATH=cert.pem")
        #expect(configuration.tlsCertificatePath == "cert.pem")
        #expect(configuration.tlsKeyPath == "key.pem")
    }

    // MARK: The database: --database-url, and --database-path its SQLite spelling

    @Test func theDatabaseURLDefaultsToTheCheckoutsSQLiteFile() throws {
        let configuration = try load()
        #expect(configuration.databaseURL == .sqlite(path: "data/retrorapid.sqlite"))
        #expect(configuration.databasePath == "data/retrorapid.sqlite")
    }

    @Test func theDatabaseURLComesFromEverySource() throws {
        #expect(try load(["--database-url", "sqlite:/srv/rr.sqlite"]).databaseURL == .sqlite(path: "/srv/rr.sqlite"))
        #expect(try load(environment: ["RETRORAPID_DATABASE_URL": "sqlite:env.sqlite"]).databasePath == "env.sqlite")
        #expect(try load(file: "RETRORAPID_DATABASE_URL=sqlite:///var/lib/rr.sqlite").databasePath == "/var/lib/rr.sqlite")
        let server = try load(["--database-url", "postgres://rr:s3cret@db/rr?sslmode=require"]).databaseURL
        guard case .postgres(let postgres) = server else {
            Issue.record("expected a PostgreSQL URL, got \(server)")
            return
        }
        #expect(postgres.conninfo == "postgres://rr:s3cret@db/rr?sslmode=require")
    }

    @Test func databasePathIsTheSameAsASQLiteURL() throws {
        let byPath = try load(["--database-path", "db.sqlite"])
        let byURL = try load(["--database-url", "sqlite:db.sqlite"])
        #expect(byPath == byURL)
        #expect(byPath.databaseURL == .sqlite(path: "db.sqlite"))
        var configuration = ServerConfiguration()
        configuration.databasePath = "set.sqlite"
        #expect(configuration.databaseURL == .sqlite(path: "set.sqlite"))
        // A server has no file: the path reads empty, and `--database-path` renders unset.
        let server = try load(["--database-url", "postgres://db/rr"])
        #expect(server.databasePath == "")
        #expect(ServerConfiguration.setting("database-path").render(server) == nil)
    }

    @Test func givenBothBySameSourceTheyMustAgree() throws {
        #expect(try load(["--database-path", "a.sqlite", "--database-url", "sqlite:a.sqlite"]).databasePath == "a.sqlite")
        let flags = loadError(["--database-path", "a.sqlite", "--database-url", "sqlite:b.sqlite"])
        #expect(flags?.message == "--database-url (sqlite:b.sqlite) and --database-path (a.sqlite) name different databases; "
            + "give one of them (--database-path PATH is --database-url sqlite:PATH)")
        #expect(flags?.source == .flag("--database-path") || flags?.source == .flag("--database-url"))
        let environment = loadError(environment: ["RETRORAPID_DATABASE_PATH": "a.sqlite",
                                                  "RETRORAPID_DATABASE_URL": "postgres://rr:s3cret@db/rr"])
        #expect(environment?.message.hasPrefix("environment variable RETRORAPID_DATABASE_URL (postgres://rr:***@db/rr) and "
            + "environment variable RETRORAPID_DATABASE_PATH (a.sqlite) name different databases") == true)
        #expect(environment.map { !$0.message.contains("s3cret") } == true)
        let file = loadError(file: "RETRORAPID_DATABASE_URL=sqlite:b.sqlite\nRETRORAPID_DATABASE_PATH=a.sqlite")
        #expect(file?.source == .envFile(path: "env file", line: 2))
        #expect(file?.message.hasPrefix("env file line 1: RETRORAPID_DATABASE_URL (sqlite:b.sqlite) and "
            + "env file line 2: RETRORAPID_DATABASE_PATH (a.sqlite)") == true)
    }

    @Test func fromDifferentSourcesTheLaterWinsAsForAnySetting() throws {
        // A flag beats the environment, the environment beats the env file, whichever spelling each uses.
        let flagPath = try load(["--database-path", "flag.sqlite"], environment: ["RETRORAPID_DATABASE_URL": "postgres://db/rr"])
        #expect(flagPath.databaseURL == .sqlite(path: "flag.sqlite"))
        let flagURL = try load(["--database-url", "sqlite:flag.sqlite"], file: "RETRORAPID_DATABASE_PATH=file.sqlite")
        #expect(flagURL.databaseURL == .sqlite(path: "flag.sqlite"))
        let environmentURL = try load(environment: ["RETRORAPID_DATABASE_URL": "sqlite:env.sqlite"],
                                      file: "RETRORAPID_DATABASE_PATH=file.sqlite")
        #expect(environmentURL.databasePath == "env.sqlite")
        let environmentPath = try load(environment: ["RETRORAPID_DATABASE_PATH": "env.sqlite"],
                                       file: "RETRORAPID_DATABASE_URL=postgres://db/rr")
        #expect(environmentPath.databaseURL == .sqlite(path: "env.sqlite"))
    }

    @Test func aBadDatabaseURLIsRefusedRedactedNamingTheSourceAndTheForms() {
        let error = loadError(["--database-url", "mysql://rr:s3cret@db/rr"])
        #expect(error?.setting == "database-url")
        #expect(error?.source == .flag("--database-url"))
        #expect(error?.message == "--database-url expects a database URL: 'mysql://rr:***@db/rr' uses 'mysql', which is not "
            + "a database this server can use. Accepted: \(DatabaseURL.acceptedForms)")
        let environment = loadError(environment: ["RETRORAPID_DATABASE_URL": "postgres://rr:s3cret@/rr"])
        #expect(environment?.message.hasPrefix("environment variable RETRORAPID_DATABASE_URL expects a database URL: "
            + "'postgres://rr:***@/rr' has no host") == true)
        let file = loadError(file: "\nRETRORAPID_DATABASE_URL=data/rr.sqlite")
        #expect(file?.message.hasPrefix("env file line 2: RETRORAPID_DATABASE_URL expects a database URL: "
            + "'data/rr.sqlite' has no scheme") == true)
        #expect(loadError(["--database-url="])?.setting == "database-url")
    }

    @Test func theDescriptionAndHelpNeverShowTheDatabasePassword() throws {
        let configuration = try load(["--database-url", "postgres://rr:s3cret@db/rr?password=s3cret"])
        #expect(!configuration.description.contains("s3cret"))
        #expect(configuration.description.contains("database-url=postgres://rr:***@db/rr?password=***"))
        #expect(configuration.description.contains("database-path=(not set)"))
        let help = ServerConfiguration.helpText
        #expect(help.contains("--database-url URL   (env RETRORAPID_DATABASE_URL)"))
        #expect(help.contains("Default: sqlite:data/retrorapid.sqlite."))
    }

    @Test func theSQLiteFileIsUsedAsGivenEitherWayAndNeverLookedUp() throws {
        // The installed-file rule looks up the Web client, migrations, fonts and OpenAPI
        // document; the database is data, kept where the setting (or the default) says.
        let locator = InstalledFileLocator(workingDirectory: "/home/op", executableDirectory: "/opt/rr/bin") { path, _ in
            path.hasPrefix("/opt/rr/share/retrorapid")
        }
        for arguments in [["--database-path", "rel/rr.sqlite"], ["--database-url", "sqlite:rel/rr.sqlite"]] {
            let located = try ServerConfiguration.load(arguments: arguments, environment: [:], envFileContents: nil, locator: locator)
            #expect(located.configuration.databaseURL == .sqlite(path: "rel/rr.sqlite"), "\(arguments)")
            #expect(located.configuration.migrationsPath == "/opt/rr/share/retrorapid/migrations")
        }
        let unset = try ServerConfiguration.load(arguments: [], environment: [:], envFileContents: nil, locator: locator)
        #expect(unset.configuration.databaseURL == .sqlite(path: "data/retrorapid.sqlite"))
    }

    // MARK: One table for every source

    @Test func everyPropertyHasExactlyOneRowInTheSettingsTable() {
        let properties = Mirror(reflecting: ServerConfiguration()).children.compactMap(\.label)
        // --database-path is the SQLite spelling of --database-url: a second row for that property.
        let aliases = ["database-path"]
        let rows = ServerConfiguration.settings.filter { !aliases.contains($0.key) }.map(\.property)
        #expect(rows.sorted() == properties.sorted())
        #expect(ServerConfiguration.setting("database-path").property == "databaseURL")
        #expect(Set(ServerConfiguration.settings.map(\.key)).count == ServerConfiguration.settings.count)
    }

    @Test func eachRowFillsThePropertyItIsNamedFor() throws {
        let defaults = ServerConfiguration()
        for setting in ServerConfiguration.settings {
            // Pick a valid value that differs from the default, then check only that property moved.
            let candidates = ["9", "300", "1", "USD", "json", "debug", "false", "elsewhere", "192.0.2.1", "poll",
                              "https://game.example.com", "3/60", "sqlite:elsewhere", "a-cluster-secret-of-32-characters",
                              "wss://a.play.example.com/ws", "wss://b.play.example.com"]
            let value = try #require(candidates.first { candidate in
                var copy = defaults
                return setting.apply(&copy, candidate) && copy != defaults
            }, "no test value for \(setting.key)")
            var changed = defaults
            _ = setting.apply(&changed, value)
            let moved = zip(Mirror(reflecting: defaults).children, Mirror(reflecting: changed).children)
                .filter { "\($0.value)" != "\($1.value)" }
                .compactMap(\.0.label)
            #expect(moved == [setting.property], "\(setting.key)")
        }
    }

    @Test func helpTextListsEveryFlagEnvironmentVariableAndDefault() {
        let help = ServerConfiguration.helpText
        let defaults = ServerConfiguration()
        for setting in ServerConfiguration.settings {
            #expect(help.contains("\(setting.flag) "), "\(setting.key)")
            #expect(help.contains("(env \(setting.environmentName))"), "\(setting.key)")
            #expect(help.contains("Default: \(setting.render(defaults) ?? "not set")."), "\(setting.key)")
        }
        #expect(help.contains("--database-path PATH   (env RETRORAPID_DATABASE_PATH)"))
        #expect(help.contains("Default: data/retrorapid.sqlite."))
        #expect(help.contains("Default: 8080."))
        #expect(help.contains("RETRORAPID_ENV_FILE"))
    }

    @Test func descriptionMasksTheWebhookSecret() throws {
        let configuration = try load(["--webhook-secret", "hunter2"])
        #expect(!configuration.description.contains("hunter2"))
        #expect(configuration.description.contains("webhook-secret=(secret)"))
        #expect(configuration.description.contains("port=8080"))
    }
}
