"""What the tests share: the JSON-RPC client, daemon starters, the CLI runner, environment
builders, skill trees and the docs snippet runner. No test module imports from another."""
