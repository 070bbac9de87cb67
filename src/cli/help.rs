//! The examples and notes each verb's `--help` ends with, kept apart so the clap definitions
//! stay readable and the examples read as they print.

pub const QUICK_START: &str = r#"Quick start:
  capabilities init
  capabilities source add everything -- npx -y @modelcontextprotocol/server-everything
  capabilities search "echo a message"
  capabilities describe everything.echo"#;

pub const INIT: &str = r#"Examples:
  capabilities init
  capabilities init --print > my-config.toml
  capabilities init --reference | less"#;

pub const SEARCH: &str = r#"Examples:
  capabilities search "echo a message"
  capabilities search "create issue" --namespace github --limit 5
  capabilities search "" --namespace everything   # list one source
  capabilities search "create issue" --profile work   # only the profile's sources, under its policy
  capabilities search "echo" --json | jq -r '.matches[].address'

Exit status: 0 when a tool matched, 1 when none did (or the search could not run), 2 for a usage error.
Notes about sources that were not searched go to stderr, apart from the results."#;

pub const DESCRIBE: &str = r#"Examples:
  capabilities describe everything.echo
  capabilities describe everything --budget 4000
  capabilities describe github.createIssue github.Issue
  capabilities describe github --profile work
  capabilities describe GetCurrentTimeResult   # a type's bare name, when one source declares it
  capabilities describe CallOptions            # the options every tool function takes"#;

pub const EXEC: &str = r#"Examples:
  capabilities exec script.js
  echo 'return await everything.echo({ message: "hi" })' | capabilities exec -
  capabilities exec --json config-examples/multi-source.js | jq .calls
  capabilities exec --resume run_4f2k   # after `capabilities hub approve run_4f2k`; a unique prefix of the id is enough
  capabilities exec --profile work script.js   # only the profile's sources, under its policy

The script is the body of an async function: each source is a global object of async functions, and what it returns is the result.
On a terminal, calls that need approval are asked about inline, with the dashboard's keys: a allow once, r for this run, A always, d deny, q stop asking.
A run resumes only under the profile it started with: `exec --resume RUN_ID --profile NAME` for a run started under NAME.
Exit status: 0 completed, 1 failed, 3 waiting for an approval or a connection, 4 cancelled, 5 being run by another process (resume again shortly)."#;

pub const CALL: &str = r#"Examples:
  capabilities call everything.echo '{"message": "hi"}'
  capabilities call time.getCurrentTime '{"timezone": "Asia/Tokyo"}' --json | jq .result
  echo '{"message": "from stdin"}' | capabilities call everything.echo -
  capabilities call github.listIssues '{"repo": "x"}' --connection work

The call is decided by policy as a script's would be: on a terminal, a call that asks is asked about inline; elsewhere the run waits, and `capabilities hub approve` then `capabilities exec --resume RUN_ID` continue it.
Exit status: 0 completed, 1 failed, 3 waiting for an approval, 4 cancelled."#;

pub const MAN: &str = r#"Examples:
  capabilities man
  capabilities man search
  capabilities man hub serve
  capabilities man --install ~/.local/share/man/man1   # then `man capabilities-search`"#;

pub const COMPLETIONS: &str = r#"Examples:
  capabilities completions bash > ~/.local/share/bash-completion/completions/capabilities
  capabilities completions zsh > ~/.zfunc/_capabilities
  capabilities completions fish > ~/.config/fish/completions/capabilities.fish"#;

pub const INSTALL: &str = r#"Examples:
  capabilities install print
  capabilities install cursor            # show what would change
  capabilities install cursor --write    # change it (the old file is backed up)
  capabilities install claude --write --profile work

Clients: claude (Claude Code, ~/.claude.json), claude-desktop, cursor (~/.cursor/mcp.json), codex (~/.codex/config.toml), print (the generic mcpServers JSON)."#;

pub const DOCTOR: &str = r#"Examples:
  capabilities doctor
  capabilities doctor --json | jq '.checks[] | select(.level != "ok")'

Exit status: 0 when everything the config needs works (warnings included), 1 when something it needs does not."#;

pub const DASHBOARD: &str = r#"Examples:
  capabilities dashboard
  capabilities tui --bell   # ring the terminal bell when a call starts waiting
  capabilities dashboard --profile work   # only that profile's runs, waiting calls and sources

Keys: a allow once, r allow for this run, A always allow (asks first), d deny, enter details, / filter, u list the sources again (as `capabilities source refresh`), ? help, q quit.
It reads the state store that every hub and `exec` share, so it works whether or not a hub is running."#;

pub const SOURCE_ADD: &str = r#"Examples:
  capabilities source add everything -- npx -y @modelcontextprotocol/server-everything
  capabilities source add time --env TZ=Europe/Paris -- uvx mcp-server-time
  capabilities source add github --url https://api.githubcopilot.com/mcp/ --header 'Authorization=Bearer ${secret:github}'
  capabilities source add shop --openapi http://127.0.0.1:8000/openapi.json --auth 'HTTPBearer=${secret:shop}'
  capabilities source add petstore --openapi ./petstore.yaml --base-url https://petstore.example.com/v3

Values of --env, --header and --auth may hold ${secret:NAME} or ${env:VAR} references; they are
stored as written. --auth names one of the OpenAPI document's security schemes
(components.securitySchemes): an API key, a bearer token, or user:password for basic."#;

pub const SOURCE_LIST: &str = r#"Examples:
  capabilities source list
  capabilities source list --json | jq '.[] | select(.status != "ready")'
  capabilities source list --profile work"#;

pub const SOURCE_REMOVE: &str = r#"Example:
  capabilities source remove everything"#;

pub const SOURCE_TEST: &str = r#"Examples:
  capabilities source test everything
  capabilities source test everything --json | jq .toolCount

Exit status: 0 when the source answered and listed its tools, 1 otherwise."#;

pub const SOURCE_LOGIN: &str = r#"Examples:
  capabilities source login linear
  capabilities source login github --connection work
  capabilities source login linear --no-browser   # print the page's address instead

The server must answer 401 with a WWW-Authenticate challenge. The sign-in page opens in your
browser and comes back to a one-time listener on 127.0.0.1; the tokens go to the credential
store (keychain or encrypted file) and are refreshed before they expire.

Exit status: 0 when signed in, 1 otherwise."#;

pub const SOURCE_LOGOUT: &str = r#"Example:
  capabilities source logout linear   # calls to it wait for a sign-in again"#;

pub const SOURCE_ENABLE: &str = r#"Example:
  capabilities source enable github"#;

pub const SOURCE_DISABLE: &str = r#"Example:
  capabilities source disable github   # keeps its config; `source enable github` turns it back on"#;

pub const SOURCE_REFRESH: &str = r#"Examples:
  capabilities source refresh
  capabilities source refresh github

Running hubs take the new listings at their next request. A tool whose definition changed asks again before its calls (a tool that may write, by default) until you confirm it with `capabilities source review`."#;

pub const SOURCE_REVIEW: &str = r#"Examples:
  capabilities source review
  capabilities source review github --yes

Each changed tool is shown as a diff of its TypeScript declaration (signature, types, description) and annotations, from the version you last confirmed to the one listed now. On a terminal you confirm each; `--yes` confirms them all."#;

pub const SOURCE_IMPORT: &str = r#"Examples:
  capabilities source import ~/.cursor/mcp.json
  capabilities source import claude_desktop_config.json --dry-run
  capabilities source import ~/.codex/config.toml

Stdio entries (command, args, env, cwd) and HTTP entries (url, headers) are imported; names become identifiers (my-server → myServer). `${VAR}` in values becomes `${env:VAR}`."#;

pub const HUB_SERVE: &str = r#"Examples:
  capabilities hub serve
  capabilities hub serve --profile work
  capabilities hub serve --direct                # each tool as its own MCP tool (namespace_tool)
  capabilities hub serve --http 127.0.0.1:8931   # Streamable HTTP at http://127.0.0.1:8931/mcp
  capabilities hub serve --http 0.0.0.0:8931 --allow-remote --allowed-host hub.example.com

MCP clients start the stdio hub themselves: `capabilities install print` shows the config entry.
Over HTTP every request needs `Authorization: Bearer <token>` (see `capabilities token create`).
Logs go to stderr: CAPABILITIES_LOG=info for an access log with a request id per request, --log-format json for JSON lines."#;

pub const HUB_APPROVE: &str = r#"Examples:
  capabilities hub approve                    # the only run that waits (lists them when several do)
  capabilities hub approve run_4f2k           # allow the pending call(s) once; a unique prefix of the id is enough
  capabilities hub approve run_4f2k --for-run # and every later call of the same tool in this run
  capabilities hub approve run_4f2k --always  # and write a policy rule that allows the tool
  capabilities hub approve run_4f2k --call 3  # only call 3

Works whether or not a hub is running: the decision goes to the state store."#;

pub const HUB_DENY: &str = r#"Examples:
  capabilities hub deny                  # the only run that waits
  capabilities hub deny run_4f2k
  capabilities hub deny run_4f2k --call 3"#;

pub const HUB_RUNS: &str = r#"Examples:
  capabilities hub runs
  capabilities hub runs --pending
  capabilities hub runs --json | jq '.[0].calls'"#;

pub const SKILL_LIST: &str = r#"Examples:
  capabilities skill list
  capabilities skill list --json | jq '.skills[].name'

Skills live in the skills/ folder beside the config file and in the folders `[skills] dirs` names.
A SKILL.md that cannot be loaded is reported with its file, line and fix; the others still load."#;

pub const SKILL_SHOW: &str = r#"Examples:
  capabilities skill show pdf-forms"#;

pub const SKILL_ADD: &str = r#"Examples:
  capabilities skill add ./pdf-forms     # copies the folder to the skills/ beside the config

The folder's SKILL.md needs YAML frontmatter with `name` (the folder's name) and `description`."#;

pub const SKILL_REMOVE: &str = r#"Examples:
  capabilities skill remove pdf-forms

Only skills in the skills/ beside the config are removed; those in `[skills] dirs` stay where they are."#;

pub const TOKEN_CREATE: &str = r#"Examples:
  capabilities token create laptop
  capabilities token create ci --profile work --expires 30d
  capabilities token create reader --allow 'everything.*' --allow 'time.getCurrentTime'

The token is printed on stdout and never shown again. Clients send it as `Authorization: Bearer <token>`.
With --allow, each call a script makes must match one of the patterns (`*` matches anything), checked on every call."#;

pub const TOKEN_LIST: &str = r#"Examples:
  capabilities token list
  capabilities token list --json | jq '.[] | select(.status == "active")'"#;

pub const TOKEN_REVOKE: &str = r#"Example:
  capabilities token revoke laptop"#;

pub const CREDENTIAL_SET: &str = r#"Examples:
  capabilities credential set github-personal
  gh auth token | capabilities credential set github-personal
  CAPABILITIES_PASSPHRASE=… capabilities credential set github-work --store file < token.txt

Then reference it from a connection: headers = { Authorization = "Bearer ${secret:github-personal}" }.
The value is never taken from the command line, where shell history and `ps` would see it."#;

pub const CREDENTIAL_LIST: &str = r#"Examples:
  capabilities credential list
  capabilities credential list --json | jq '.[] | select(.stored | not)'"#;

pub const CREDENTIAL_REMOVE: &str = r#"Example:
  capabilities credential remove github-work"#;

pub const CREDENTIAL_TEST: &str = r#"Example:
  capabilities credential test github-personal"#;

pub const POLICY_SHOW: &str = r#"Examples:
  capabilities policy show
  capabilities policy show --profile work   # the defaults with the profile's own rules
  capabilities policy show --json | jq .rules"#;

pub const POLICY_SET: &str = r#"Examples:
  capabilities policy set 'github.search*' allow
  capabilities policy set '*.delete*' deny
  capabilities policy set 'github.*' ask --connection work
  capabilities policy set 'github.*' allow --profile work   # a rule of that profile only

A profile's rules replace the config's [[policy.rules]] for runs under it; the defaults are shared."#;

pub const POLICY_EXPLAIN: &str = r#"Examples:
  capabilities policy explain everything.echo
  capabilities policy explain github.createIssue --connection work
  capabilities policy explain github.createIssue --profile work
  capabilities policy explain everything.echo --json | jq -r .action"#;
