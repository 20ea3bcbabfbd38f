import CLibWebSockets
import Foundation

/// libwebsockets logs through one process-wide emit function; ours keeps errors and warnings.
public enum LWSLogging {
    private static let configured: Void = {
        lws_set_log_level(LLL_ERR | LLL_WARN) { level, line in
            guard let line else { return }
            var text = String(cString: line)
            while text.last?.isNewline == true { text.removeLast() }
            let label = level & LLL_ERR != 0 ? "error" : "warning"
            FileHandle.standardError.write(Data("libwebsockets \(label): \(text)\n".utf8))
        }
    }()

    public static func configureOnce() {
        _ = configured
    }
}
