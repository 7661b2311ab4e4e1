#if canImport(Glibc)
import Glibc
#endif

/// Whether the user's locale says their terminal takes UTF-8, decided as ncurses decides it:
/// `setlocale(LC_CTYPE, "")`, then `nl_langinfo(CODESET)`. `LC_ALL=C`, `LANG=C` or
/// `LC_CTYPE=POSIX` give ASCII; `C.UTF-8`, `en_US.UTF-8` give UTF-8.
public enum LocaleCharset {
    public static func isUTF8() -> Bool {
        // perfhud itself stays in the C locale (what C calls elsewhere expect): restored after.
        let previous = setlocale(LC_CTYPE, nil).map { String(cString: $0) } ?? "C"
        defer { _ = setlocale(LC_CTYPE, previous) }
        if setlocale(LC_CTYPE, "") != nil, let codeset = nl_langinfo(nl_item(CODESET)) {
            return isUTF8(codeset: String(cString: codeset))
        }
        // A locale that is named but not installed here (en_US.UTF-8 on a minimal system): the
        // name still says what the user's terminal speaks.
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            if let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty {
                return isUTF8(codeset: String(value.split(separator: ".", maxSplits: 1).dropFirst().first?.split(separator: "@").first ?? ""))
            }
        }
        return false
    }

    package static func isUTF8(codeset: String) -> Bool {
        let name = codeset.lowercased().filter { $0 != "-" && $0 != "_" }
        return name == "utf8"
    }
}
