package market

// WithSleepFunc lets the tests of package market_test replace the wait between attempts
// (the option is not part of the public API).
var WithSleepFunc = withSleep
