package mediatype

// AliasesForTest is the alias table, for the external tests.
var AliasesForTest = aliases
