//! The clap definitions of every verb (`*Args`). No logic lives here.
