import Foundation
import RetroRapidLoad
import RetroRapidSupport

/// `retrorapid loadtest`: many player connections against a server on this machine; prints
/// what it measured (docs/BENCHMARKS.md, "Capacity"). The work is in RetroRapidLoad.
enum LoadTestCommand: Command {
    static let name = "loadtest"
    static let summary = "play many games against a server on this machine and measure it"
    static let usage = """
        usage: retrorapid loadtest --tokens-file FILE [--connections N] [--level cruise|fast|rapid]
                                   [--idle] [--host ADDRESS] [--port P] [--ramp-per-second R]
                                   [--settle-seconds S] [--hold-seconds H] [--source-addresses A,B,…]
                                   [--server-pid PID] [--miss-chance X] [--wander-chance X]
                                   [--seed S] [--mode solo|race] [--room-seats K] [--watchers W]
                                   [--steps S] [--follow-game-url] [--reconnect] [--json]

          --tokens-file FILE   device tokens, one per line, one per connection
                               (retrorapid seed-players makes them)
          --connections N      players to connect and hold, 1 to 19900 (default 100)
          --level L            the level every game is played at (default fast)
          --idle               sign in and stay, never start a game (memory per idle player)
          --host, --port       the server: a loopback address only (default 127.0.0.1:8080)
          --ramp-per-second R  new connections a second (default 1000)
          --settle-seconds S   wait after the ramp before measuring (default 5)
          --hold-seconds H     the measured window (default 20)
          --source-addresses   local 127.0.0.x addresses to spread connections over, so no
                               address runs short of ephemeral ports (default: the kernel's choice)
          --server-pid PID     sample this process's CPU and memory (Linux /proc)
          --miss-chance X      chance a needed move is not made, so the player crashes (default 0.02)
          --wander-chance X    chance of an unneeded lane change on a safe step (default 0.25)
          --seed S             the bots' random seed (default 1)
          --mode M             solo: every player plays games of its own (default);
                               race: the players race in rooms of --room-seats
          --room-seats K       racers per room, 2 to 8 (default 8; --mode race only); the
                               connections must fill whole rooms (2,000 racers: 250 rooms of 8)
          --watchers W         extra signed-in connections that watch the players' games,
                               spread evenly over them (default 0; tokens after the players')
          --steps S            a fixed, bounded workload: each player plays one game, quits it
                               after S steps (0: at once) and starts no other; the run ends when
                               every game is over and all of it is measured (no settle, no window;
                               --hold-seconds is then the most the games may take after the ramp)
          --follow-game-url    move each connection to the game URL its welcome names
                               (gameUrl, a ws:// loopback URL), as the browser does
          --reconnect          open a new connection 0.5 s after one drops and take the game
                               back (resume), as the browser does; the report says how long
                               the games took to run again and the play they lost
          --json               print one JSON object instead of the text summary

        The bot plays like a person: it hears the safe-lane cue, moves 150–350 ms into the step,
        sometimes misses, and after a game over waits 1–3 s and starts again. Latency is from a
        move written to its `moved` answer; jitter is how far each step's arrival is from the
        interval the step before announced. Only the window after the ramp and settle is measured.
        In a race the first racer of each room opens it, the others join by its code, all get
        ready and the first starts; each racer plays its race game as a solo player does, and
        gets ready again for the rematch 1–3 s after `raceOver`. Watchers watch a room's seat
        (a race) or a player's current game (solo) from its first step, and again from the
        next game after `watchEnded`; their lag is a step's arrival at the watcher minus its
        arrival at the player watched, on the load generator's one clock.
        Progress goes to standard error. Exit status: 0 measured, 1 could not run, 64 bad arguments.
        """

    static func run(arguments: [String]) throws -> Int32 {
        var options = LoadTestOptions()
        let asJSON: Bool
        do {
            let parsed = try ParsedArguments(
                arguments, booleanFlags: ["idle", "json", "follow-game-url", "reconnect"],
                valueOptions: ["tokens-file", "connections", "level", "host", "port", "ramp-per-second",
                               "settle-seconds", "hold-seconds", "source-addresses", "server-pid",
                               "miss-chance", "wander-chance", "seed", "mode", "room-seats", "watchers", "steps"])
            guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument '\(parsed.positionals[0])'") }
            guard let tokensPath = parsed.value("tokens-file") else { throw UsageError("--tokens-file FILE is required") }
            options.connections = try parsed.int("connections", default: options.connections, range: 1...LoadTestOptions.maximumConnections)
            options.level = try parsed.string("level", default: options.level, allowed: ["cruise", "fast", "rapid"])
            options.idle = parsed.flag("idle")
            options.host = parsed.value("host") ?? options.host
            options.port = try parsed.int("port", default: options.port, range: 1...65535)
            options.rampPerSecond = try parsed.int("ramp-per-second", default: options.rampPerSecond, range: 1...100_000)
            options.settleSeconds = try parsed.int("settle-seconds", default: options.settleSeconds, range: 0...LoadTestOptions.maximumSeconds)
            options.holdSeconds = try parsed.int("hold-seconds", default: options.holdSeconds, range: 1...LoadTestOptions.maximumSeconds)
            options.sourceAddresses = parsed.value("source-addresses").map { $0.split(separator: ",").map(String.init) } ?? []
            if parsed.value("server-pid") != nil {
                options.serverPID = Int32(try parsed.int("server-pid", default: 0, range: 1...Int(Int32.max)))
            }
            options.behaviour.missChance = try probability(parsed, "miss-chance", default: options.behaviour.missChance)
            options.behaviour.wanderChance = try probability(parsed, "wander-chance", default: options.behaviour.wanderChance)
            options.seed = UInt64(try parsed.int("seed", default: 1, range: 0...Int.max))
            let mode = try parsed.string("mode", default: options.mode.rawValue, allowed: LoadTestOptions.Mode.allCases.map(\.rawValue))
            options.mode = LoadTestOptions.Mode(rawValue: mode)!
            if parsed.value("room-seats") != nil, options.mode != .race {
                throw UsageError("--room-seats goes with --mode race")
            }
            options.roomSeats = try parsed.int("room-seats", default: options.roomSeats, range: 2...8)
            options.watchers = try parsed.int("watchers", default: options.watchers, range: 0...LoadTestOptions.maximumConnections)
            if parsed.value("steps") != nil {
                if options.mode != .solo || options.watchers > 0 {
                    throw UsageError("--steps is a bounded solo workload: it goes with neither --mode race nor --watchers")
                }
                options.steps = try parsed.int("steps", default: 0, range: 0...100_000)
            }
            options.followGameURL = parsed.flag("follow-game-url")
            options.reconnect = parsed.flag("reconnect")
            asJSON = parsed.flag("json")
            guard let contents = try? String(contentsOfFile: tokensPath, encoding: .utf8) else {
                throw UsageError("cannot read the tokens file \(tokensPath)")
            }
            options.tokens = contents.split(whereSeparator: \.isNewline).map(String.init)
            try options.validate()
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        } catch let error as LoadTestError {
            throw UsageError(error.description)
        }
        do {
            let generator = try LoadGenerator(options: options)
            let report = try generator.run { line in
                FileHandle.standardError.write(Data("loadtest: \(line)\n".utf8))
            }
            print(asJSON ? report.json : report.text)
            return 0
        } catch {
            RetroRapidMain.printError("\(error)")
            return 1
        }
    }

    private static func probability(_ parsed: ParsedArguments, _ name: String, default value: Double) throws -> Double {
        guard let text = parsed.value(name) else { return value }
        guard let number = Double(text), (0...1).contains(number) else {
            throw UsageError("--\(name) expects a number from 0 to 1, got '\(text)'")
        }
        return number
    }
}
