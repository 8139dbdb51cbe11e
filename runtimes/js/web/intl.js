(function (web) {
});
