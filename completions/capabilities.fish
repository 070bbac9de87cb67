# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_capabilities_global_optspecs
    string join \n config= color= log-format= otel-endpoint= h/help V/version
end

function __fish_capabilities_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_capabilities_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_capabilities_using_subcommand
    set -l cmd (__fish_capabilities_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c capabilities -n "__fish_capabilities_needs_command" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_needs_command" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_needs_command" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_needs_command" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_needs_command" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "init" -d 'Write a commented starter config'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "source" -d 'Add, list, test, enable, disable and remove sources (MCP servers)'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "search" -d 'Find tools by what you want to do; prints one-line TypeScript signatures, best match first'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "describe" -d 'Print exact TypeScript declarations of tools, namespaces or named types'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "exec" -d 'Run a JavaScript (or TypeScript) script against your sources in the sandbox'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "call" -d 'Call one tool with JSON arguments, under policy, and print its result (for shell scripts)'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "hub" -d 'Run the MCP hub that your agent talks to'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "install" -d 'Print the MCP client config that starts the hub, or write it into the client\'s config file'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "credential" -d 'Store, list, test and remove secrets: the values of `${secret:NAME}` in the config'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "doctor" -d 'Check this machine: the config, which credential store works here, and what the sources need'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "policy" -d 'Show, change and explain the allow / ask / deny policy'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "dashboard" -d 'Watch every run on this machine and decide on waiting calls, live, in a terminal UI'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "token" -d 'Create, list and revoke the bearer tokens that `hub serve --http` accepts'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "skill" -d 'List, show, add and remove skills (folders with a SKILL.md) the agent can describe'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "man" -d 'Show the manual page of capabilities, or of one verb (`capabilities man hub serve`)'
complete -c capabilities -n "__fish_capabilities_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l force -d 'Overwrite an existing config'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l print -d 'Print the starter config instead of writing it'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -l reference -d 'Print the full commented reference of every key'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand init" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "enable" -d 'Turn a source back on: it is connected, searched and callable again'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "disable" -d 'Turn a source off without removing it: it is not started, searched or callable'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "import" -d 'Import the MCP servers of a client config (the `mcpServers` JSON of Claude, Cursor and others)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "refresh" -d 'List the tools of every source (or one) again now, and say which changed'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "review" -d 'Show how each changed tool differs from the version you confirmed, and confirm it'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "login" -d 'Sign a connection of a Streamable HTTP source in with OAuth, in your browser'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "logout" -d 'Forget a connection\'s OAuth sign-in (its tokens in the credential store)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and not __fish_seen_subcommand_from add list remove test enable disable import refresh review login logout help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l url -d 'Streamable HTTP endpoint of the server' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l openapi -d 'An HTTP API\'s OpenAPI 3.x document (JSON or YAML), as a file or a URL: each operation becomes a tool' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l base-url -d 'Where an OpenAPI source\'s requests go, instead of the document\'s `servers`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l header -d 'A header for an HTTP or OpenAPI source, as NAME=VALUE (repeatable)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l auth -d 'An OpenAPI source\'s credential for one of its document\'s security schemes, as SCHEME=VALUE, e.g. `api_key=${secret:pets}` (repeatable)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l env -d 'An environment variable for a stdio source, as KEY=VALUE (repeatable)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l cwd -d 'Working directory of a stdio source' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -l no-test -d 'Write the source without connecting to it first'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l profile -d 'List only this profile\'s sources' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -l json -d 'Print the result as JSON'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from test" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from enable" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from disable" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -l dry-run -d 'Show what would be imported without changing the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from import" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from refresh" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -l yes -d 'Confirm every change shown without asking'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from review" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l connection -d 'The connection to sign in (default: the source\'s default connection)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -l no-browser -d 'Print the sign-in page\'s address instead of opening a browser'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from login" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l connection -d 'The connection to sign in (default: the source\'s default connection)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -l no-browser -d 'Print the sign-in page\'s address instead of opening a browser'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from logout" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Turn a source back on: it is connected, searched and callable again'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Turn a source off without removing it: it is not started, searched or callable'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "import" -d 'Import the MCP servers of a client config (the `mcpServers` JSON of Claude, Cursor and others)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "refresh" -d 'List the tools of every source (or one) again now, and say which changed'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "review" -d 'Show how each changed tool differs from the version you confirmed, and confirm it'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "login" -d 'Sign a connection of a Streamable HTTP source in with OAuth, in your browser'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "logout" -d 'Forget a connection\'s OAuth sign-in (its tokens in the credential store)'
complete -c capabilities -n "__fish_capabilities_using_subcommand source; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s n -l namespace -d 'Search (or list) only this source' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s l -l limit -d 'Show at most this many tools' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l profile -d 'Search only this profile\'s sources, under its policy' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l refresh -d 'Re-list every source instead of using cached listings'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -l json -d 'Print the matches as JSON'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand search" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l budget -d 'Token budget of the output (o200k_base tokens)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l profile -d 'Describe only this profile\'s tools, under its policy' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l refresh -d 'Re-list every source instead of using cached listings'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -l json -d 'Print the declarations as JSON (`{ "targets": […], "declarations": "…" }`)'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand describe" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l resume -d 'Continue a run that waited for approval (after `capabilities hub approve RUN_ID`); a unique prefix of the id is enough' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l output-budget -d 'Largest result to return, in bytes of JSON (1,024 to 65,536)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l profile -d 'Run with only this profile\'s sources, under its policy; a run resumes only under the profile it started with' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -l json -d 'Print the whole envelope as JSON instead of the result'
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand exec" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l connection -d 'The connection to call through (default: the source\'s default)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l profile -d 'Call under this profile\'s sources and policy' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -l json -d 'Print the whole envelope as JSON instead of the result'
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand call" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand completions" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -f -a "serve" -d 'Serve search, describe and execute to an MCP client over stdin/stdout, or over HTTP'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -f -a "approve" -d 'Approve the pending calls of a paused run; the agent then resumes it'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -f -a "deny" -d 'Deny the pending calls of a paused run'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -f -a "runs" -d 'List recent runs, or only those waiting for a decision'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and not __fish_seen_subcommand_from serve approve deny runs help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l profile -d 'Serve only this profile\'s sources, under its policy rules' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l http -d 'Serve MCP Streamable HTTP at http://ADDRESS/mcp instead of stdio (e.g. 127.0.0.1:8931)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l allowed-host -d 'A host name clients use to reach the hub, accepted in the `Host` header besides localhost (repeatable; the DNS-rebinding check refuses any other)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l allow-origin -d 'A web origin (`scheme://host[:port]`) whose pages may call the hub from a browser, besides the hub\'s own (repeatable). A request whose `Origin` header names any other is refused' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l header-timeout -d 'Seconds a client has to send the whole head of a request once its first byte arrived' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l idle-timeout -d 'Seconds a connection may stay open with no request in progress and nothing received' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l body-timeout -d 'Seconds a client has to send the whole body of a request once its head arrived' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l max-connections -d 'The most connections served at once; one more is answered 503 and closed' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l direct -d 'Serve every tool of the sources as its own MCP tool (`namespace_tool`) instead of search, describe and execute; a profile chooses this with `mode = "direct"`'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -l allow-remote -d 'Allow --http on an address other machines can reach (put TLS termination in front)'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from serve" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l call -d 'Decide only this call (its number in the run) instead of every pending one' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l for-run -d 'Also allow later calls of the same tool in this run without asking'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -l always -d 'Also add a policy rule that always allows the tool (asks for confirmation on a terminal)'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -s y -l yes -d 'Decide without showing the calls and asking first on a terminal (needed for --always without one)'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from approve" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -l call -d 'Decide only this call instead of every pending one' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from deny" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l limit -d 'How many recent runs to show' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l pending -d 'Only runs with calls waiting for a decision'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l json -d 'Print JSON (with calls, approvals and the audit trail) instead of a table'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -l clear -d 'Delete every stored run (journals, approvals, audit) and the key they are encrypted with, to start a new run history, e.g. after that key was lost. Bearer tokens and settings are kept. Stop running hubs first. Asks first on a terminal'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -s y -l yes -d 'With --clear: delete without asking (needed when there is no terminal to ask on)'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from runs" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Serve search, describe and execute to an MCP client over stdin/stdout, or over HTTP'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from help" -f -a "approve" -d 'Approve the pending calls of a paused run; the agent then resumes it'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from help" -f -a "deny" -d 'Deny the pending calls of a paused run'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from help" -f -a "runs" -d 'List recent runs, or only those waiting for a decision'
complete -c capabilities -n "__fish_capabilities_using_subcommand hub; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l profile -d 'Start the hub with this profile (`hub serve --profile NAME`); it must be in the config' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l name -d 'The server\'s name in the client\'s config' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -l write -d 'Change the client\'s config file (after backing it up) instead of only showing the change'
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand install" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -f -a "set" -d 'Store a secret, read from a hidden prompt (or standard input when it is not a terminal)'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -f -a "list" -d 'List stored secrets: name, store, and the connections that reference each (never values)'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -f -a "remove" -d 'Delete a secret from its store'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -f -a "test" -d 'Check that a secret can be read, then connect every connection that references it'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and not __fish_seen_subcommand_from set list remove test help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -l store -d 'Where to keep it; default: `[credentials] store` in the config, else the keychain' -r -f -a "keychain\t'The OS keychain (macOS Keychain, Windows Credential Manager, Linux Secret Service)'
file\t'A file in the data directory encrypted with a passphrase, for machines without a keychain'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from test" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "set" -d 'Store a secret, read from a hidden prompt (or standard input when it is not a terminal)'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "list" -d 'List stored secrets: name, store, and the connections that reference each (never values)'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Delete a secret from its store'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "test" -d 'Check that a secret can be read, then connect every connection that references it'
complete -c capabilities -n "__fish_capabilities_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -l json -d 'Print the checks as JSON'
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -f -a "show" -d 'Print the defaults and rules, and warn about rules that match no tool'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -f -a "set" -d 'Add a rule (or change the action of the rule with the same pattern)'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -f -a "explain" -d 'Say which rule decides a tool, and why'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and not __fish_seen_subcommand_from show set explain help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l profile -d 'Show this profile\'s policy: the defaults with its own rules' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -l json -d 'Print the policy as JSON'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l connection -d 'Apply only to calls through this connection' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l profile -d 'Add the rule to this profile\'s rules instead of the config\'s' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l connection -d 'The connection the call would use (default: the source\'s default)' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l profile -d 'Decide as this profile\'s policy would (the tool must be one of its sources\')' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -l json -d 'Print the decision as JSON'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from explain" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the defaults and rules, and warn about rules that match no tool'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "set" -d 'Add a rule (or change the action of the rule with the same pattern)'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "explain" -d 'Say which rule decides a tool, and why'
complete -c capabilities -n "__fish_capabilities_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l profile -d 'Show only this profile\'s runs, waiting calls and sources' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -l bell -d 'Ring the terminal bell when a new call waits for a decision'
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand dashboard" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "create" -d 'Create a bearer token and print it once; only its hash is stored'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "list" -d 'List tokens (never their values): profile, patterns, expiry, and whether revoked'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "revoke" -d 'Revoke a token; the hub refuses it from the next request (or call) on'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l profile -d 'Only a hub serving this profile accepts the token' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l expires -d 'How long the token works: a number and a unit, s, m, h, d or w (e.g. 30d). Default: until revoked' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l allow -d 'An address pattern the holder may call, e.g. `github.*` (repeatable). Default: every tool' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from create" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of a table'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from revoke" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create a bearer token and print it once; only its hash is stored'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "list" -d 'List tokens (never their values): profile, patterns, expiry, and whether revoked'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke a token; the hub refuses it from the next request (or call) on'
complete -c capabilities -n "__fish_capabilities_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -f -a "list" -d 'List the skills (name and description), and every SKILL.md that could not be loaded'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -f -a "show" -d 'Show a skill as the agent sees it: its instructions and supporting files'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -f -a "add" -d 'Copy a skill folder into the config directory\'s skills/, after checking its SKILL.md'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -f -a "remove" -d 'Delete a skill from the config directory\'s skills/'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and not __fish_seen_subcommand_from list show add remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -l json -d 'Print JSON instead of lines'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the skills (name and description), and every SKILL.md that could not be loaded'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show a skill as the agent sees it: its instructions and supporting files'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from help" -f -a "add" -d 'Copy a skill folder into the config directory\'s skills/, after checking its SKILL.md'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Delete a skill from the config directory\'s skills/'
complete -c capabilities -n "__fish_capabilities_using_subcommand skill; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -l install -d 'Write every page into this directory (e.g. ~/.local/share/man/man1) instead of showing one' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -l config -d 'Config file to use instead of the default (also $CAPABILITIES_CONFIG)' -r -F
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -l color -d 'When to colour log lines and the dashboard and show progress lines (results are plain text): auto (only on a terminal, and not with $NO_COLOR set), always or never' -r -f -a "auto\t'Colour and progress on a terminal, unless $NO_COLOR is set'
always\t''
never\t''"
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -l log-format -d 'How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks which lines are written, e.g. `info` for an access log of the hub\'s requests' -r -f -a "text\t'Lines for people; a request\'s span (with its request id) comes before the message'
json\t'One JSON object per line, every one with a request_id: timestamp, level, target, request_id, run_id, message, fields, spans'"
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -l otel-endpoint -d 'Export traces (a span per hub request and per run) to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build with `--features otel`' -r
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c capabilities -n "__fish_capabilities_using_subcommand man" -s V -l version -d 'Print version'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "init" -d 'Write a commented starter config'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "source" -d 'Add, list, test, enable, disable and remove sources (MCP servers)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "search" -d 'Find tools by what you want to do; prints one-line TypeScript signatures, best match first'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "describe" -d 'Print exact TypeScript declarations of tools, namespaces or named types'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "exec" -d 'Run a JavaScript (or TypeScript) script against your sources in the sandbox'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "call" -d 'Call one tool with JSON arguments, under policy, and print its result (for shell scripts)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "completions" -d 'Print a shell completion script'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "hub" -d 'Run the MCP hub that your agent talks to'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "install" -d 'Print the MCP client config that starts the hub, or write it into the client\'s config file'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "credential" -d 'Store, list, test and remove secrets: the values of `${secret:NAME}` in the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "doctor" -d 'Check this machine: the config, which credential store works here, and what the sources need'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "policy" -d 'Show, change and explain the allow / ask / deny policy'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "dashboard" -d 'Watch every run on this machine and decide on waiting calls, live, in a terminal UI'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "token" -d 'Create, list and revoke the bearer tokens that `hub serve --http` accepts'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "skill" -d 'List, show, add and remove skills (folders with a SKILL.md) the agent can describe'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "man" -d 'Show the manual page of capabilities, or of one verb (`capabilities man hub serve`)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and not __fish_seen_subcommand_from init source search describe exec call completions hub install credential doctor policy dashboard token skill man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "add" -d 'Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "list" -d 'Connect to every source and list them with their live status and tool counts'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "remove" -d 'Remove a source from the config'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "test" -d 'Connect to one source, list its tools, and report what happened'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "enable" -d 'Turn a source back on: it is connected, searched and callable again'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "disable" -d 'Turn a source off without removing it: it is not started, searched or callable'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "import" -d 'Import the MCP servers of a client config (the `mcpServers` JSON of Claude, Cursor and others)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "refresh" -d 'List the tools of every source (or one) again now, and say which changed'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "review" -d 'Show how each changed tool differs from the version you confirmed, and confirm it'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "login" -d 'Sign a connection of a Streamable HTTP source in with OAuth, in your browser'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from source" -f -a "logout" -d 'Forget a connection\'s OAuth sign-in (its tokens in the credential store)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from hub" -f -a "serve" -d 'Serve search, describe and execute to an MCP client over stdin/stdout, or over HTTP'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from hub" -f -a "approve" -d 'Approve the pending calls of a paused run; the agent then resumes it'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from hub" -f -a "deny" -d 'Deny the pending calls of a paused run'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from hub" -f -a "runs" -d 'List recent runs, or only those waiting for a decision'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "set" -d 'Store a secret, read from a hidden prompt (or standard input when it is not a terminal)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "list" -d 'List stored secrets: name, store, and the connections that reference each (never values)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "remove" -d 'Delete a secret from its store'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "test" -d 'Check that a secret can be read, then connect every connection that references it'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "show" -d 'Print the defaults and rules, and warn about rules that match no tool'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "set" -d 'Add a rule (or change the action of the rule with the same pattern)'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "explain" -d 'Say which rule decides a tool, and why'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "create" -d 'Create a bearer token and print it once; only its hash is stored'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "list" -d 'List tokens (never their values): profile, patterns, expiry, and whether revoked'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "revoke" -d 'Revoke a token; the hub refuses it from the next request (or call) on'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from skill" -f -a "list" -d 'List the skills (name and description), and every SKILL.md that could not be loaded'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from skill" -f -a "show" -d 'Show a skill as the agent sees it: its instructions and supporting files'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from skill" -f -a "add" -d 'Copy a skill folder into the config directory\'s skills/, after checking its SKILL.md'
complete -c capabilities -n "__fish_capabilities_using_subcommand help; and __fish_seen_subcommand_from skill" -f -a "remove" -d 'Delete a skill from the config directory\'s skills/'
