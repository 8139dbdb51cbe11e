// date-fns on fixed instants, in UTC (the sandbox's only time zone; node runs with TZ=UTC).
import { addBusinessDays, addMonths, differenceInCalendarDays, eachDayOfInterval, endOfMonth, format, formatDistanceStrict, formatISO, intervalToDuration, isLeapYear, isValid, parse, parseISO, startOfWeek, subYears } from "date-fns";

const base = new Date(Date.UTC(2024, 1, 29, 13, 45, 30, 123));
const other = parseISO("2025-07-04T08:00:00Z");
const out = {
  formats: ["yyyy-MM-dd", "EEEE, MMMM do yyyy", "HH:mm:ss.SSS", "h:mm a", "QQQ yyyy", "I 'week' R", "t", "MMM d"].map((f) => format(base, f)),
  addMonths: formatISO(addMonths(base, 12)),
  subYears: formatISO(subYears(base, 1)),
  businessDays: format(addBusinessDays(base, 10), "yyyy-MM-dd EEE"),
  endOfMonth: formatISO(endOfMonth(base)),
  startOfWeek: formatISO(startOfWeek(base, { weekStartsOn: 1 })),
  diffDays: differenceInCalendarDays(other, base),
  distance: formatDistanceStrict(base, other),
  duration: intervalToDuration({ start: base, end: other }),
  days: eachDayOfInterval({ start: base, end: addBusinessDays(base, 3) }).map((d) => format(d, "d EEE")),
  leap: [2023, 2024, 1900, 2000].map((y) => isLeapYear(new Date(Date.UTC(y, 5, 1)))),
  parsed: formatISO(parse("31/12/1999 23:59", "dd/MM/yyyy HH:mm", base)),
  invalid: isValid(parseISO("2024-13-45")),
};
console.log(JSON.stringify(out, null, 1));
