"""Generates questions.jsonl and unanswerable_keys.json (run after build.py)."""
import json, os
HERE = os.path.dirname(os.path.abspath(__file__))
def P(s):
    pre, rel = s.split(":", 1)
    base = {"T": "docs/tts-handbook/pages/", "G": "docs/18f-guides/content/"}[pre] + rel
    stem = base[:-3] if base.endswith(".md") else base
    for ext in (".md", ".html", ".pdf", ".docx", ".xlsx"):
        if os.path.exists(os.path.join(HERE, stem + ext)):
            return stem + ext
    raise SystemExit("no file for " + s)

LEAVE="T:travel-and-leave/leave.md"; OT="T:travel-and-leave/overtime.md"; PPL="T:travel-and-leave/paid-parental-leave.md"
FMLA="T:travel-and-leave/fmla.md"; VLTP="T:travel-and-leave/voluntary-leave-transfer-program.md"; ASL="T:travel-and-leave/advanced-sick-leave.md"
OOO="T:travel-and-leave/going-out-of-office.md"; MOVE="T:travel-and-leave/travel-and-leave-policies/moving.md"
UFT="T:travel-and-leave/travel-and-leave-policies/unofficial-foreign-travel.md"; EQ="T:getting-started/equipment.md"; PIV="T:getting-started/piv.md"
PW="T:general-information-and-resources/tech-policies/password-requirements.md"; SEC="T:general-information-and-resources/tech-policies/security-incidents.md"
BB="T:general-information-and-resources/tech-policies/bug-bounty.md"; PR="T:general-information-and-resources/purchase-requests.md"
TERM="T:hiring-staying-or-changing-jobs/term-extensions.md"; LEAVING="T:hiring-staying-or-changing-jobs/leaving-tts.md"; PROMO="T:hiring-staying-or-changing-jobs/promotions.md"
EV="T:general-information-and-resources/employee-resources-policies/employment-verification.md"
SPK="T:general-information-and-resources/employee-resources-policies/hosting-non-government-speakers.md"
TRANSIT="T:general-information-and-resources/employee-resources-policies/transit-benefit.md"
WS="T:general-information-and-resources/employee-resources-policies/work-schedules.md"
BL="T:general-information-and-resources/employee-resources-policies/benefits-links.md"
GC="T:general-information-and-resources/general-contacts.md"; DATES="T:performance-management/dates.md"; IDP="T:training-and-development/idp.md"
OLU="T:training-and-development/olu.md"; DET="T:training-and-development/details-professional-development.md"; CONF="T:training-and-development/conferences-events-training.md"
NAME="T:18f/how-18f-works/changing-your-name.md"; CHI="T:general-information-and-resources/chicago.md"; NYC="T:general-information-and-resources/new-york-city.md"
SF="T:general-information-and-resources/san-francisco.md"; DC="T:general-information-and-resources/washington-dc.md"
ZOOM="T:tools/zoom.md"; MEET="T:tools/google-meet.md"; SLACKG="T:tools/slack/guidelines.md"; SW="T:general-information-and-resources/software.md"
REIMB="T:travel-and-leave/travel-and-leave-policies/travel-guide-4-reimbursement.md"; TOCK="T:tools/tock.md"; BEN="T:getting-started/classes/benefits.md"
CARD="T:travel-and-leave/travel-and-leave-policies/first-time-travel-travel-card.md"; WWT="T:travel-and-leave/travel-and-leave-policies/working-while-traveling.md"
INTV="G:eng-hiring/interviews.md"; DEBRIEF="G:eng-hiring/debrief.md"; PHONE="G:eng-hiring/phone-screens.md"; CR="G:engineering/our-approach/code-review.md"
ONCALL="G:engineering/our-approach/on-call.md"; NUM="G:content-guide/our-style/numbers-and-percentages.md"; COLOR="G:brand/color-palette.md"
COC="T:about-us/code-of-conduct.md"; WELCOME="T:getting-started/welcome-letter.md"

Q = []   # standalone: (kind, question, answers, [golds])
def q(kind, question, answers, golds):
    Q.append((kind, question, answers, golds))
# ---------------- amount
q("amount", "I've been a fed for about 5 years now, how much annual leave do I build up each pay period?", ["6 hours per pay period"], [LEAVE])
q("amount", "what's the most vacation time I can roll over into next year?", ["240 annual leave hours", "240 hour limit"], [LEAVE])
q("amount", "is there a cap on how much award leave I can get in one year?", ["80 hours of award leave", "80 hour cap"], [LEAVE])
q("amount", "how much time off do we get to go vote?", ["4 hours for each election event", "up to 4 hours"], [LEAVE])
q("amount", "what salary do you have to be under to still get overtime or comp time?", ["$191,900"], [OT])
q("amount", "how many credit hours am I allowed to have banked at any one time?", ["24 credit hours"], [OT])
q("amount", "vet here with a service-connected disability - how much leave can I get for my treatment?", ["104 hours of disabled veteran leave"], [LEAVE])
q("amount", "I've run out of sick days, how much advanced sick leave can I ask for?", ["240 hours of advanced sick leave"], [ASL])
q("amount", "what's the dollar limit for buying services through the micropurchase route?", ["under $10,000"], [PR])
q("amount", "for the leave donation program, how far in the negative does my balance have to be?", ["at least 24 hours", "negative leave balance of at least 24 hours"], [VLTP])
q("amount", "what's the most software can cost if I want to buy it through the normal handbook process?", ["under $10,000"], [SW])
q("amount", "roughly how much of a discount does Apple give feds on personal stuff?", ["~10%"], [BEN])
# ---------------- date / duration
q("date", "how long is parental bereavement leave if someone loses a child?", ["two weeks (80 hours)", "two weeks", "80 hours"], [LEAVE])
q("date", "when are year-end self-assessments due for FY25?", ["October 17, 2025"], [DATES])
q("date", "when do the FY25 performance awards get paid out?", ["December 10, 2025"], [DATES])
q("date", "how long do I have to use comp time before it disappears?", ["26 pay periods", "one year (26 pay periods)"], [OT])
q("date", "how far ahead do I need to put in a leave request?", ["at least three business days in advance", "three business days"], [OOO])
q("date", "got back from a personal trip overseas, how soon do I need to do the debrief form?", ["Within five days of your return", "five days"], [UFT])
q("date", "how early should I kick off offboarding before my last day?", ["at least two weeks before your last day", "two weeks"], [LEAVING])
q("date", "how long does a legal name change take to go through in HR Links?", ["up to 5 business days", "5 business days"], [NAME])
q("date", "how long does a typical detail assignment last?", ["30 - 120 days"], [DET])
q("date", "which day of the week do they process new badges?", ["every Wednesday", "Wednesday"], [PIV])
q("date", "once my business card order is approved, when will the cards show up?", ["7-10 business days"], [PR])
q("date", "when does PeopleOps start the term renewal conversation with my supervisor?", ["6-7 months before"], [TERM])
q("date", "how fast do I have to report a security incident?", ["within 1 hour", "within one hour"], [SEC])
q("date", "after I leave, how long can I still get into Employee Express?", ["3 years"], [LEAVING])
q("date", "when is my Tock timecard due each week?", ["close of business", "by the end of the day"], [TOCK])
q("date", "after I submit a travel voucher, how long until it gets reviewed?", ["3-5 business days"], [REIMB])
q("date", "how far ahead do I need to request a conference that costs more than $2,500 with travel?", ["three to five weeks in advance"], [CONF])
q("date", "how long can my lunch break be?", ["30-minute or one-hour lunch break"], [BEN])
# ---------------- count
q("count", "how many days of military leave do we get a year?", ["15 Military Leave days", "15 days"], [LEAVE])
q("count", "my spouse is military and we have to relocate, how many days of admin leave do I get?", ["5 days of administrative leave"], [LEAVE])
q("count", "how many documents do I need to pull together to ask for advanced sick leave?", ["4 pieces of paperwork"], [ASL])
q("count", "how many kinds of flexible schedules does GSA allow?", ["all 5 types of flexible schedules", "5 types"], [WS])
q("count", "how many hours does a full-timer work in one pay period?", ["80 hours in a two week pay period", "80 hours"], [WS])
q("count", "how many characters does the passcode on my work iPhone need?", ["longer than 14 characters"], [EQ])
q("count", "how many free counseling sessions does the EAP give you?", ["six free sessions"], [BEN])
q("count", "roughly how many Slack channels are there in the TTS workspace?", ["over 1,000 channels"], [SLACKG])
q("count", "how many days of admin leave can I take to be a bone marrow donor?", ["up to 7 days", "7 days"], [LEAVE])
# ---------------- name
q("name", "who do I talk to if I think I need FMLA?", ["Workforce Relations HR Specialist"], [FMLA])
q("name", "besides my supervisor, who else has to sign off if I want more than 80 hours of unpaid leave?", ["Business Unit Director"], [LEAVE])
q("name", "which form do I fill out to ask for donated leave?", ["OPM Form 630"], [VLTP])
q("name", "which password manager are we supposed to be using?", ["KeePassXC"], [PW])
q("name", "what's the tool for reporting a phishing email?", ["Cofense"], [SEC])
q("name", "my mortgage lender wants to verify my job and salary, what service do they use?", ["The Work Number"], [EV])
q("name", "who does the first triage on bug bounty reports?", ["H1 staff"], [BB])
q("name", "who's the point of contact for the Chicago office?", ["Dave Lamb"], [CHI])
q("name", "who's the contact person for the New York office?", ["Ethan Heppner"], [NYC])
q("name", "what do I put as the organization code on the transit benefit form?", ["T-TECH TRANSFORMATION SERVICE"], [TRANSIT])
q("name", "who signs off on office supply requests in the end?", ["TTS Director of Operations"], [PR])
q("name", "what do outside guest speakers need to sign before they talk to us?", ["Gratuitous Services Agreement"], [SPK])
q("name", "what domain do I type in when signing into Zoom with SSO?", ["gsa.zoomgov.com"], [ZOOM])
q("name", "where do I look up whether a piece of software is already approved at GSA?", ["GEAR", "GSA IT standards list"], [SW])
q("name", "which voucher type do I pick to get reimbursed for professional liability insurance?", ["miscellaneous voucher"], [REIMB])
# ---------------- yes_no
q("yes_no", "if I quit, do they pay me for my leftover award leave?", ["award leave is not paid out"], [LEAVE])
q("yes_no", "if I leave GSA does my unused travel comp time get paid out?", ["any unused travel comp time will be forfeited", "forfeited"], [OT])
q("yes_no", "can I plug my personal laptop into the network when I'm at a GSA office?", ["Personal laptops cannot be connected directly to the GSA network"], [EQ])
q("yes_no", "I've only been a federal employee for 6 months, can I use FMLA yet?", ["at least one year of federal service"], [FMLA])
q("yes_no", "do I need to fill out the event request form if I'm just attending a free webinar?", ["do not need to fill out the Event Request Google Form"], [CONF])
q("yes_no", "can we pay an outside guest speaker for their time?", ["we can not compensate guests for their time"], [SPK])
q("yes_no", "should I restart my Mac after installing the smartcard mapping app?", ["DO NOT REBOOT"], [PIV])
q("yes_no", "can my last day at TTS be a federal holiday?", ["cannot be a federal holiday"], [LEAVING])
q("yes_no", "do credit hours ever expire?", ["they never expire"], [OT])
q("yes_no", "do Zoom meetings we host need a password?", ["require a meeting password"], [ZOOM])
q("yes_no", "do I need to update GSA systems if I'm only relocating for a couple of months?", ["you do not need to update GSA systems", "120 days or less"], [MOVE])
# ---------------- procedure
q("procedure", "how do I donate some of my annual leave to a coworker who's sick?", ["vltp.gsa.gov", "Donate Annual Leave Hours To A Shared Leave Recipient"], [VLTP])
q("procedure", "how do I sign up for the transit subsidy?", ["transitapp.ost.dot.gov", "Transit Benefit Application"], [TRANSIT])
q("procedure", "I got a sketchy looking email, what should I do?", ["Do not click any links in the email", "Cofense"], [SEC])
q("procedure", "I'm resigning - who do I send my notice to?", ["leavingTTS@gsa.gov"], [LEAVING])
q("procedure", "how do I get GSA systems to show the name I actually go by?", ["Preferred Name field", "GCIMS"], [NAME])
q("procedure", "I'm moving to another state, what do I do about state tax withholding?", ["tax withholding form", "kc-payroll.finance@gsa.gov"], [MOVE])
q("procedure", "how do I order business cards?", ["envisionprintservices.com", "micropurchase request form"], [PR])
q("procedure", "I need a loaner laptop for a 3PAO test, how do I request one?", ["GSA Hardware Request - Loaner"], [EQ])
q("procedure", "what's the checklist before I head out on vacation?", ["Submit a leave request through HR Links", "email auto-responder"], [OOO])
q("procedure", "we're expecting a baby, what do I send in to request paid parental leave?", ["Paid Parental Leave Request", "timesheet report"], [PPL])
q("procedure", "I'm planning a personal trip abroad, what do I have to do before I go?", ["Foreign Travel Notification Form"], [UFT])
q("procedure", "how do I stop my transit benefit?", ["Withdraw from the program"], [TRANSIT])
q("procedure", "my Mac's audio in Meet stopped working, how do I fix it?", ["sudo killall coreaudiod"], [MEET])
q("procedure", "how do I email OLU support?", ["Need Help", "Email Support"], [OLU])
# ---------------- policy
q("policy", "what kind of leave do I use when I get called for jury duty?", ["Court Leave"], [LEAVE])
q("policy", "the power's out at my place and I can't work, what leave is that?", ["Weather and Safety Leave"], [LEAVE])
q("policy", "can I just shift my hours around for a religious holiday instead of burning PTO?", ["request an adjustment to your work schedule"], [OT])
q("policy", "during an active security incident, how are we allowed to share sensitive data?", ["GSA Google Drive"], [SEC])
q("policy", "my laptop is acting weird and I think it's compromised, should I shut it down?", ["DO NOT turn off your computer"], [SEC])
q("policy", "is it ok to keep CUI on my own computer?", ["can never be stored on a personal machine"], [EQ])
q("policy", "what happens to donated leave hours I didn't end up using?", ["returned to the colleagues that donated to you"], [VLTP])
q("policy", "how long do I need to be at my current grade before I can apply for a promotion?", ["at their current GS level for one year", "one year"], [PROMO])
q("policy", "should I use Zoom or Google Meet for normal internal meetings?", ["most GSA virtual meetings should be conducted in Google Meet", "Google Meet"], [ZOOM])
q("policy", "can stuff in private Slack channels ever become public?", ["FOIA request"], [SLACKG])
# ---------------- fact
q("fact", "what floor is TTS on in the Chicago building?", ["35th floor"], [CHI])
q("fact", "what floor is the New York office on?", ["Floor 55"], [NYC])
q("fact", "what's the street address of the San Francisco office?", ["50 United Nations Plaza", "50 UN Plaza"], [GC, SF])
q("fact", "what Tock code do I use for time spent on OLU trainings?", ["969 - GSA-mandated Non-Billable Work", "969"], [OLU])
q("fact", "which HR Links code is weather and safety leave?", ["Code 094"], [LEAVE])
q("fact", "what's the GSA employer code for The Work Number?", ["10536"], [EV])
q("fact", "what's the usual split of renewals for an 8 year term appointment?", ["3+3+2"], [TERM])
q("fact", "what comes in the remote worker home kit?", ["a monitor, keyboard, mouse, headset, and hub"], [EQ])
q("fact", "which website do I use for dental and vision insurance?", ["benefeds.com"], [BL])
q("fact", "where do I create my IDP?", ["Online University (OLU)"], [IDP])
q("fact", "what's the hex code for the dark blue in the 18F palette?", ["1C304A"], [COLOR])
q("fact", "where's TTS inside the DC headquarters building?", ["second floor, in the 4th wing"], [DC])
q("fact", "where's the nursing room in the DC building?", ["room 1232A"], [DC])
q("fact", "what's the EAP phone line?", ["1-800-222-0364"], [BEN])
q("fact", "what do people usually wear at the Chicago office?", ["business casual", "there is no dress code officially"], [CHI])
q("fact", "what's the goal of the phone screen in engineering hiring?", ["assess a candidate's rough fit for the position"], [PHONE])
PERF="T:performance-management/index.md"; FAQ="T:travel-and-leave/travel-and-leave-policies/travel-guide-faq.md"
TRAVEL3="T:travel-and-leave/travel-and-leave-policies/travel-guide-3-travel.md"; BOOK="T:travel-and-leave/travel-and-leave-policies/travel-guide-2-book-travel.md"
T101="T:getting-started/classes/travel-101.md"; DIST="T:general-information-and-resources/distributed.md"; TDEV="T:training-and-development/index.md"
TECH="G:eng-hiring/interviews/technical.md"; SEL="G:eng-hiring/selection.md"
q("date", "how soon after someone starts a new role should their performance plan be in place?", ["within 30 days of an employee entering a role"], [PERF])
q("yes_no", "can I work remotely from abroad while I'm on a personal vacation there?", ["teleworking from locations outside the U.S. while on personal travel is not allowed"], [FAQ])
q("fact", "what's AdTrav's phone number?", ["(877) 472-6716"], [FAQ, BOOK, T101])
q("policy", "will they reimburse me for checking two bags?", ["fees for 2 or more bags requires additional justification"], [TRAVEL3])
q("date", "what days does a Tock week run?", ["beginning on Sunday and ending on Saturday"], [TOCK])
q("name", "any headphones people recommend for long calls?", ["HD 219"], [DIST])
q("fact", "which grades can get into the Treasury Executive Institute training?", ["GS-14, 15, and SES"], [TDEV])
q("date", "as a technical interviewer, how long should my questions take?", ["40 to 45 minutes"], [TECH])
q("policy", "can I get reimbursed for driving my own car to a work thing?", ["can be approved if considered advantageous to the government"], [TRAVEL3])
q("yes_no", "do I need receipts for the incidentals part of per diem?", ["at your discretion to spend", "need to provide receipts"], [TRAVEL3])
q("amount", "how much is a transfer on the CTA in Chicago?", ["$0.25"], [CHI])
q("policy", "does the interview panel get to make the final call on hiring an engineer?", ["the interview team is not involved in final selection"], [SEL])

TP = []
def tp(question, parts, golds):
    TP.append((question, parts, golds))
tp("how many weeks of paid parental leave do we get, and how much unpaid FMLA can I take to look after a family member who's an injured servicemember?",
   [["12 weeks of paid time off", "12 weeks"], ["26 weeks"]], [PPL, FMLA])
tp("what's the cap on carrying over annual leave, and how many credit hours can I keep banked?",
   [["240 annual leave hours", "240 hour limit"], ["24 credit hours"]], [LEAVE, OT])
tp("which floor is TTS on in the Chicago office and which floor in New York?",
   [["35th floor"], ["Floor 55"]], [CHI, NYC])
tp("how many sick leave hours do I earn per pay period, and what's the most advanced sick leave I can get on top?",
   [["four hours of sick leave per pay period", "4 sick leave hours per pay period"], ["240 hours of advanced sick leave"]], [LEAVE, ASL])
tp("how much advanced sick leave can I request, and how negative must my balance be before I can get donated leave?",
   [["240 hours of advanced sick leave"], ["at least 24 hours"]], [ASL, VLTP])
tp("how much notice do I need for a normal leave request vs. how early do I start offboarding when I quit?",
   [["three business days"], ["at least two weeks before your last day"]], [OOO, LEAVING])
tp("what password manager should I use, and how long does my work phone passcode have to be?",
   [["KeePassXC"], ["longer than 14 characters"]], [PW, EQ])
tp("what's the Chicago office address and who's the contact person there?",
   [["230 S. Dearborn St. 60604", "230 S. Dearborn"], ["Dave Lamb"]], [GC, CHI])
tp("for engineering interviews, how long does the interview day take, and how long should my run-through be at the debrief?",
   [["four hours"], ["10 minute run-through", "10 minutes"]], [INTV, DEBRIEF])
tp("when do I have to submit my Tock timecard each week, and what Tock code do I use for OLU trainings?",
   [["close of business", "by the end of the day"], ["969 - GSA-mandated Non-Billable Work", "969"]], [TOCK, OLU])

U = []   # (id_suffix, question, keys)
def u(question, keys):
    U.append((question, keys))
u("is there a home office stipend, and how much is it?", ["stipend", "home office allowance"])
u("how many weeks of sabbatical do we get after five years?", ["sabbatical"])
u("what's the referral bonus if I refer an engineer who gets hired?", ["referral bonus", "referral award"])
u("how much does GSA match on my TSP contributions?", ["agency match", "matching contribution", "tsp match", "agency automatic"])
u("how many days of paid leave do we get for our own wedding?", ["wedding", "marriage leave"])
u("what's the exact dollar max per night for a hotel in New York City?", ["hotel rate in new york", "per diem for new york", "new york per diem", "nyc per diem", "lodging rate for new york"])
u("how much is the monthly transit subsidy?", ["monthly transit", "monthly subsidy", "transit subsidy of $", "transit benefit of $", "per month in transit"])
u("is there a relocation allowance if I move for the job?", ["relocation allowance", "relocation expenses", "relocation bonus", "relocation incentive"])
u("how much paid leave do we get to care for a sick pet?", ["sick pet", "pet care", "care for a pet", "care for your pet"])
u("what's the payout for a critical bug in the bug bounty program?", ["critical severity", "bounty amount", "bounty of $"])
u("what's the daily limit for meals when I'm on travel in San Francisco?", ["meals limit", "daily meal limit", "m&ie rate for san francisco", "per diem in san francisco", "per diem for san francisco"])
u("how many annual leave hours can part-time employees carry over?", ["part-time employees can carry", "part-time employee can carry", "part-time employees may carry"])
u("how much is the signing bonus for new engineers?", ["signing bonus", "sign-on bonus", "recruitment incentive"])
u("can I bring my dog to the Chicago office?", ["dogs allowed", "pets allowed", "bring your dog", "pet policy", "no dogs"])
u("will TTS pay for my family to come along on a work trip?", ["family members traveling", "family members on a work trip", "family to travel", "travel companion", "bring your family", "family travel"])
u("how much can I spend on a standing desk for my home office?", ["standing desk allowance", "desk allowance", "reimbursed for a standing desk", "home office furniture"])
u("how many hours of paid leave do we get for our kid's school events?", ["school event", "school activities", "parent-teacher", "school-related"])
u("does GSA cover travel insurance on personal trips abroad?", ["travel insurance"])
u("does TTS reimburse my home internet bill?", ["home internet", "internet bill", "internet reimbursement", "internet stipend"])
u("what's the annual budget for books and training materials per person?", ["training budget is", "training budget of", "per person per year", "annual budget for books", "book budget", "learning budget"])
u("how much paid time off do interns get?", ["interns get", "intern leave", "interns accrue", "interns earn"])
C = []  # conversations: list of turns; turn = ("A", kind, question, answers, golds) or ("U", question, keys)
def conv(*turns):
    C.append(turns)
conv(("A", "amount", "how much annual leave do I get if I'm new to the federal government?", ["4 hours per pay period"], [LEAVE]),
     ("A", "amount", "and once I pass 15 years?", ["8 hours per pay period"], [LEAVE]),
     ("A", "yes_no", "if I leave do I get a payout for the annual leave I haven't used?", ["your annual leave will be paid out"], [LEAVING]))
conv(("A", "date", "how long is paid parental leave?", ["12 weeks of paid time off", "12 weeks"], [PPL]),
     ("A", "yes_no", "do I have to take it all in one go?", ["taken all at once or intermittently", "You do not need to take all 12 weeks at once"], [PPL]),
     ("A", "policy", "what if I want to quit soon after I come back?", ["return to work for at least 12 weeks"], [PPL]))
conv(("A", "count", "how long does my work iPhone passcode need to be?", ["longer than 14 characters"], [EQ]),
     ("A", "procedure", "and how do I lock my MacBook quickly?", ["Control + Shift + Power"], [EQ]),
     ("A", "name", "different question - who do I ask about getting my badge to work in another GSA building?", ["hspd12.security@gsa.gov"], [PIV]))
conv(("A", "date", "when's the year-end self-assessment due?", ["October 17, 2025"], [DATES]),
     ("A", "date", "and when do managers do the 1:1 review meetings?", ["Oct 23 - Nov 7, 2025"], [DATES]),
     ("A", "amount", "how big is the bonus if I get a level 5 rating?", ["up to 3.85% of adjusted basic pay", "3.85% of adjusted basic pay"], [PERF]))
conv(("A", "procedure", "how do I get approval to go to a conference?", ["Submit this form to initiate the request process", "initiate the request process"], [CONF]),
     ("A", "date", "how long until the events team gets back to me?", ["within 2 business days"], [CONF]),
     ("U", "can I expense a ticket for my partner to the conference dinner?", ["guest ticket", "plus-one", "significant other", "spouse's ticket"]))
conv(("A", "policy", "how much time off do I get for jury duty?", ["for however long you serve on a jury"], [LEAVE]),
     ("A", "policy", "and if I'm subpoenaed as a witness?", ["serve as a witness in a judicial proceeding"], [LEAVE]),
     ("A", "fact", "ok unrelated - what's the code for weather leave in HR Links?", ["Code 094"], [LEAVE]))
conv(("A", "procedure", "how do I enroll in the transit benefit?", ["transitapp.ost.dot.gov", "Transit Benefit Application"], [TRANSIT]),
     ("A", "name", "who has to approve it?", ["supervisor, GSA Transit Coordinator, and DOT"], [TRANSIT]))
conv(("A", "date", "how long can a term appointment go in total?", ["four or eight years"], [TERM]),
     ("A", "yes_no", "does it renew automatically?", ["Term renewals are not automatic"], [TERM]),
     ("A", "procedure", "my NTE date didn't update on the first day of my new term, what do I do?", ["tts-peopleops@gsa.gov"], [TERM]))
conv(("A", "procedure", "I clicked a link in a phishing email, who do I tell?", ["itservicedesk@gsa.gov and devops@gsa.gov"], [SEC]),
     ("A", "date", "how quickly?", ["within one hour", "within 1 hour"], [SEC]))
conv(("A", "fact", "where's the New York office?", ["One World Trade Center"], [NYC]),
     ("A", "fact", "and SF?", ["50 United Nations Plaza", "50 UN Plaza"], [GC, SF]),
     ("A", "policy", "is it easy to drive and park there?", ["street parking is horrible", "paid parking is way expensive"], [SF]))
conv(("A", "amount", "how much sick leave do we earn?", ["four hours of sick leave per pay period", "4 sick leave hours per pay period"], [LEAVE, ASL]),
     ("A", "yes_no", "is there a max on how much I can save up?", ["There is no maximum amount of sick leave you can accrue", "no maximum amount of sick leave"], [LEAVE]),
     ("A", "procedure", "switching topics, how do I ask for advanced sick leave?", ["Advanced Sick Leave Request form"], [ASL]))
conv(("A", "policy", "can I use my personal laptop for work?", ["Personal laptops cannot be connected directly to the GSA network"], [EQ]),
     ("A", "policy", "what about my personal phone?", ["only approved smartphones and tablets"], [EQ]),
     ("U", "does GSA pay part of my personal phone bill if I use it for work?", ["phone bill", "reimburse your personal phone", "cell phone stipend", "phone stipend", "wireless bill"]))
conv(("A", "procedure", "how do I change my name in GSA systems after getting married?", ["Log in to HR Links"], [NAME]),
     ("A", "date", "how long does that take?", ["up to 5 business days"], [NAME]),
     ("A", "procedure", "and then how do I get my Google account updated?", ["submit a GSA IT Help Desk"], [NAME]))
conv(("A", "fact", "what schedule are new hires put on by default?", ["standard schedule"], [WS]),
     ("A", "yes_no", "can I earn credit hours on that one?", ["Not available with this schedule"], [WS]),
     ("A", "amount", "ok, and how many credit hours can I have at once if I switch to flex?", ["24 credit hours"], [OT]))
conv(("A", "fact", "what's The Work Number's phone number?", ["800-367-5690"], [EV]),
     ("A", "date", "what hours can they be reached by phone?", ["8:00 AM to 8:00 PM EST", "Monday through Friday"], [EV]))
conv(("A", "date", "how long is the interview day for engineering candidates?", ["four hours"], [INTV]),
     ("A", "yes_no", "do they get a break?", ["30 minute break"], [INTV]),
     ("U", "what salary do 18F engineers start at?", ["starting salary", "salary range", "salary for engineers", "engineers are paid", "pay range for engineers"]))
conv(("A", "procedure", "what do I need to do before a personal trip abroad?", ["Foreign Travel Notification Form"], [UFT]),
     ("A", "policy", "what if the country is a level 4 travel advisory?", ["one-on-one travel briefing"], [UFT]),
     ("U", "does GSA pay for travel insurance for that trip?", ["travel insurance"]))
conv(("A", "fact", "what are code reviews meant to achieve here?", ["Expose bugs before they make it to production"], [CR]),
     ("A", "fact", "where should we write down our team's review process?", ["CONTRIBUTING.md"], [CR]))
conv(("A", "procedure", "how do I sign up for the leave donation program?", ["OPM Form 630"], [VLTP]),
     ("A", "date", "how long does approval take?", ["within 10 business days"], [VLTP]),
     ("A", "procedure", "different topic: where do I check how much comp time I'm allowed to earn?", ["Bi-weekly Comp Time Cap Calculator"], [OT]))
conv(("A", "policy", "what's our rule for writing numbers in blog posts?", ["spell out numbers one through nine"], [NUM]),
     ("A", "policy", "and percentages?", ["spell out percent"], [NUM]),
     ("A", "policy", "and dates?", ["Use the full, four-digit year", "October 22, 2005"], [NUM]))
conv(("A", "yes_no", "is there a Mac loaner program?", ["does not currently have a Mac Loaner Program"], [EQ]),
     ("A", "procedure", "ok so how do I get a loaner PC?", ["loaner PC through the IT Service Desk"], [EQ]))
conv(("A", "procedure", "how do I get reimbursed for a work trip?", ["creating a voucher in Concur", "New Voucher"], [REIMB]),
     ("A", "date", "how long until the money shows up?", ["3-5 business days after approval"], [REIMB]),
     ("U", "unrelated, but does GSA offer pet insurance?", ["pet insurance", "insurance for pets", "insurance for your pet"]))
conv(("A", "yes_no", "do new people need a travel card?", ["it is required that everyone at TTS have one as soon as possible"], [CARD]),
     ("A", "procedure", "and when I'm working from another city, how do I let people know?", ["Noting your location in your Slack name"], [WWT]))

out = []; keys = {}
n = 0
for kind, question, answers, golds in Q:
    n += 1
    out.append({"id": "en-%03d" % n, "question": question, "kind": kind, "answers": answers,
                "gold_files": [P(g) for g in golds], "answerable": True})
for question, parts, golds in TP:
    n += 1
    out.append({"id": "en-%03d" % n, "question": question, "kind": "two_page", "answers": [],
                "answers_all": parts, "gold_files": [P(g) for g in golds], "answerable": True})
for question, ks in U:
    n += 1
    qid = "en-%03d" % n
    out.append({"id": qid, "question": question, "kind": "unanswerable", "answers": [],
                "gold_files": [], "answerable": False})
    keys[qid] = ks
for ci, turns in enumerate(C, 1):
    for ti, t in enumerate(turns, 1):
        qid = "en-c%02d-t%d" % (ci, ti)
        base = {"id": qid, "conversation": "c-%02d" % ci, "turn": ti}
        if t[0] == "A":
            _, kind, question, answers, golds = t
            base.update({"question": question, "kind": kind, "answers": answers,
                         "gold_files": [P(g) for g in golds], "answerable": True})
        else:
            _, question, ks = t
            base.update({"question": question, "kind": "unanswerable", "answers": [],
                         "gold_files": [], "answerable": False})
            keys[qid] = ks
        out.append(base)
with open(HERE + "/questions.jsonl", "w") as f:
    for o in out:
        f.write(json.dumps(o, ensure_ascii=False) + "\n")
json.dump(keys, open(HERE + "/unanswerable_keys.json", "w"), indent=1)
print(len(out))
