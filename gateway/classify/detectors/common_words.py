"""Everyday English and programming words that turn up capitalised (sentence starts, titles,
class names) but are never names. Written for this project; checked with one set lookup so
the costlier name evidence is only gathered for words that could be names."""

from __future__ import annotations

_ENGLISH = """
About Above Accept Access According Account Across Act Action Active Activity Actual Actually
Add Added Adding Addition Address Adult After Again Against Age Agency Agent Ago Agree Ahead Aid
Aim Air Airport Alarm Album Alert Algorithm Alive All Allow Allowed Almost Alone Along Already
Also Alter Alternative Always Amazing American Among Amount Analysis Analyze Ancient Angle Angry
Animal Annual Another Answer Anxiety Any Anyone Anything Anyway Apart Apply Approach Approve Area
Argue Argument Arm Army Around Arrange Arrive Article Artist Aside Aspect Assess Asset Assign
Assume Atom Attach Attack Attempt Attempted Attend Attention Attitude Audience Author Auto
Available Average Avoid Award Aware Away Awful Back Background Bad Bag Balance Ball Band Bar Base
Based Basic Basically Basis Battle Bear Beat Beautiful Because Become Bed Before Begin Behavior
Behind Being Believe Below Benefit Best Better Between Beyond Bill Billion Bit Blank Block Blood
Board Body Bold Bonus Book Border Born Both Bottom Box Brain Branch Brand Break Brief Bright Bring
Broad Broken Brother Budget Build Builder Building Built Business Busy Button Buy Cache Calculate
Call Called Calm Camera Camp Campaign Cancel Cancer Candidate Capacity Capital Car Care Career
Careful Carry Cash Cat Catch Category Cause Cell Center Century Certain Certainly Chain Chair
Challenge Chance Change Changes Channel Character Charge Chart Cheap Check Chemical Chest Child
Choice Church Circle Citizen City Civil Claim Classic Clean Clear Clearly Click Climate Clock Close
Closed Cloud Coach Coast Code Coffee Collect Collection Color Colour Column Combine Come Comfort
Command Comment Commercial Commission Common Community Compare Compared Compete Complete Complex
Component Computer Concept Concern Condition Conduct Conference Config Configuration Confirm
Conflict Congress Connect Connection Consider Consistent Constant Construct Contact Contain
Content Context Continue Contract Control Convert Cook Cool Copy Core Corner Correct Cost Could
Count Counter Country Couple Course Court Cover Create Created Creates Creation Credit Crime
Critical Cross Crowd Culture Current Currently Custom Cut Cycle Daily Damage Dance Danger Dark
Data Database Daughter Dead Deal Death Debate Decade Decide Decision Declare Deep Default Defense
Define Definition Degree Delay Deliver Demand Democrat Deny Depend Deploy Depth Describe Design
Desire Despite Detail Details Detect Determine Develop Development Device Die Diet Difference
Different Difficult Digital Dinner Direct Direction Directly Director Discover Discuss Disease
Display Distance Divide Doctor Document Dog Domain Door Double Doubt Down Draft Draw Dream Dress
Drink Drive Drop Drug Due Dynamic Each Early Earn Earth Easily East Easy Eat Economic Economy Edge
Edit Edition Education Effect Effective Effort Either Election Element Else Email Emergency
Employee Empty Enable Encode Encoding Encourage Enemy Energy Engine Enjoy Enough Ensure Enter
Entire Entry Environment Equal Equation Error Errors Escape Especially Establish Estimate Even
Evening Event Events Eventually Ever Every Everyone Everything Evidence Exact Exactly Exam Example
Excellent Except Exchange Exist Existing Expect Expected Experience Experiment Expert Explain
Export Express Extend Extra Eye Face Fact Factor Fail Failed Failure Fair Fall False Familiar
Family Famous Fan Far Farm Fast Father Fear Feature Features Federal Fee Feel Feeling Female Few
Field Fight Figure File Files Fill Film Filter Final Finally Financial Find Fine Finger Finish
Fire Firm First Fish Fit Fix Fixed Flag Flat Floor Flow Fly Focus Follow Following Food Foot
Force Foreign Forget Form Format Former Forward Found Frame Free Fresh Friend From Front Fruit
Full Fully Fun Function Functions Fund Future Gain Game Garden Gas Gate Gather General Generate
Generated Generator Generic Get Gets Girl Give Given Glad Global Go Goal Good Government Great
Green Ground Group Grow Growth Guard Guess Guest Guide Gun Guy Hair Half Hall Hand Handle Handler
Hang Happen Happy Hard Head Header Headers Health Hear Heart Heat Heavy Held Hello Help Helper
Helps Here High History Hit Hold Home Hope Hospital Host Hot Hotel House However Huge Human
Hundred Hunt Idea Identify Ignore Image Imagine Impact Implement Import Important Improve Include
Including Income Increase Indeed Index Indicate Individual Industry Info Information Initial
Inner Input Inside Install Instance Instead Integer Interest Interface Internal International
Interview Into Invalid Invest Issue Item Items Itself Job Join Joint Journey Judge Jump Just Keep
Key Kid Kill Kind Kitchen Know Knowledge Known Label Lack Lady Land Language Large Last Late Later
Latest Laugh Launch Law Lawyer Layer Lead Leader Learn Learning Least Leave Left Leg Legal Length
Less Let Letter Level Library Lie Life Light Like Likely Limit Limits Line Link List Listen Little
Live Load Loan Local Location Lock Log Logic Login Long Look Loop Lose Loss Lost Lot Loud Love
Low Lower Machine Main Maintain Major Make Maker Male Man Manage Management Manager Manual Many
Map Mapping Mark Market Marriage Master Match Material Matter Maximum Maybe Meal Mean Meaning
Measure Media Medical Medium Meet Meeting Member Memory Mention Menu Merge Message Metal Method
Middle Might Military Million Mind Minimum Minute Mirror Miss Mission Mistake Mix Mobile Mode
Model Modern Moment Money Monitor Month Moral More Morning Most Mother Motion Mount Mouth Move
Movement Movie Much Multiple Murder Music Must Myself Name Nation National Natural Nature Near
Nearly Necessary Need Negative Network Never New News Next Nice Night Nobody Node Noise None
Normal North Not Note Nothing Notice Novel Now Nowhere Null Number Object Observe Obtain Obvious
Occur Offer Office Officer Official Often Oil Okay Old Once Online Only Onto Open Operation
Opinion Opportunity Option Optional Order Ordinary Organization Origin Original Other Others
Otherwise Ought Outcome Output Outside Over Overall Own Owner Page Pain Paint Pair Panel Paper
Parent Parse Parser Part Particular Partner Party Pass Past Path Patient Pattern Pay Peace People
Per Percent Perfect Perform Perhaps Period Permission Person Personal Phase Phone Photo Physical
Pick Picture Piece Place Plan Plane Planet Plant Platform Play Player Please Plus Point Police
Policy Political Politics Pool Poor Popular Population Port Position Positive Possible Post
Potential Power Practice Prepare Present President Press Pressure Pretty Prevent Previous Price
Primary Primitive Print Prior Private Probably Problem Process Produce Product Production
Professional Profile Profit Program Progress Project Promise Proof Proper Property Protect Prove
Provide Provider Proxy Public Pull Purpose Push Put Quality Quarter Query Question Quick Quickly
Quiet Quite Race Radio Raise Random Range Rate Rather Raw Reach Read Reader Ready Real Reality
Realize Really Reason Receive Recent Recently Record Red Reduce Refer Reference Reflect Region
Regular Reject Relate Relation Relationship Release Remain Remember Remote Remove Render Repeat
Replace Reply Report Represent Request Requests Require Required Research Reset Resource Respond
Response Responses Rest Result Results Retry Return Returns Reveal Review Rich Ride Right Rise
Risk River Road Rock Role Room Root Round Route Router Row Rule Run Runtime Safe Sale Same Sample
Save Scale Scene Schema School Science Score Screen Script Sea Search Season Seat Second Secret
Section Security See Seek Seem Select Self Sell Send Sends Senior Sense Sent Series Serious Serve
Server Service Session Set Setting Settings Setup Several Shape Share Sharp Sheet Shift Ship Shoot
Shop Short Should Show Side Sign Signal Significant Similar Simple Simply Since Single Sister Site
Situation Size Skill Skin Sky Sleep Slow Small Smart Smile Social Society Soft Software Soldier
Solid Solution Solve Some Someone Something Sometimes Son Song Soon Sorry Sort Sound Source South
Space Speak Special Specific Speech Speed Spend Sport Spring Square Staff Stage Stand Standard Star
Start State States Statement Station Status Stay Step Still Stock Stop Storage Store Story
Strategy Stream Street Strength Strict String Strong Structure Student Study Stuff Style Subject
Submit Success Successful Such Suddenly Suffer Suggest Summer Super Support Suppose Sure Surface
Switch System Table Take Talk Target Task Tax Teach Teacher Team Technology Tell Template Term
Terms Test Testing Text Than That Theory Therapy There Thing Things Think Third Though Thought
Thousand Threat Through Throw Thus Ticket Time Timeout Title Today Together Too Tool Tools Top
Topic Total Touch Toward Town Track Trade Traditional Training Transfer Transport Travel Treat
Treatment Tree Trial Trip Trouble True Trust Truth Try Turn Type Types Typical Under Understand
Union Unique Unit United Unless Unlike Until Update Upon Upper Usage Use Used User Users Useful
Uses Using Usual Usually Valid Value Values Variable Various Version Very View Village Visit
Voice Vote Wait Walk Wall Want War Warning Watch Water Way Weak Wear Weather Web Week Weight
Welcome Well West Western What Whatever Wheel Whether While White Whole Wide Wife Win Wind Window
Winter Wish Within Without Woman Wonder Word Work Worker World Worry Worth Would Write Writer
Wrong Yard Yeah Yet Young Yourself Youth Zero Zone
"""

_PROGRAMMING = """
Abstract Any AnyStr Args Array Async Attribute Await Base Bool Boolean Buffer Byte Bytes Callable
Class Client Const Cookie Cookies Coroutine Dict Dictionary Enum Exception False Float Frozen Int
Iterable Iterator KeyError List Literal Mutable None Optional Protocol Queue Sequence Set Stream
Struct Sync Tuple TypeError Typed Union ValueError Void Test Tests Mock Fixture Assert Raise
Raises Yield Lambda Const Static Public Private Protected Override Final Module Package Import
Export Default Props State Component Hook Context Provider Reducer Store Action Dispatch Route
Router Middleware Handler Controller View Model Schema Migration Query Mutation Resolver Token
Auth Authorization Authentication Bearer Content Length Encoding Transfer Connection Keep Alive
Redirect Status Code Method Body Json Xml Yaml Csv Html Css Sql Url Uri Http Https Api Rest
Grpc Tcp Udp Dns Ssl Tls Proxy Timeout Retry Limit Limits Pool Worker Thread Process Task Job
Cron Event Listener Emitter Logger Log Debug Info Warn Fatal Trace Metrics Span Tracer
"""

# Places and peoples: capitalised, frequent in prompts, never a person's name on their own.
_PLACES = """
Africa America Americas Antarctica Arctic Asia Atlantic Australia Europe Pacific Oceania
Afghanistan Albania Algeria Andorra Angola Argentina Armenia Austria Azerbaijan Bahamas Bahrain
Bangladesh Barbados Belarus Belgium Belize Benin Bhutan Bolivia Bosnia Botswana Brazil Brunei
Bulgaria Burundi Cambodia Cameroon Canada Chad Chile China Colombia Congo Croatia Cuba Cyprus
Czechia Denmark Djibouti Dominica Ecuador Egypt Eritrea Estonia Eswatini Ethiopia Fiji Finland
France Gabon Gambia Germany Ghana Greece Greenland Grenada Guatemala Guinea Guyana Haiti Honduras
Hungary Iceland India Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan Jordan Kazakhstan
Kenya Kiribati Korea Kosovo Kuwait Kyrgyzstan Laos Latvia Lebanon Lesotho Liberia Libya
Liechtenstein Lithuania Luxembourg Madagascar Malawi Malaysia Maldives Mali Malta Mauritania
Mauritius Mexico Micronesia Moldova Monaco Mongolia Montenegro Morocco Mozambique Myanmar Namibia
Nauru Nepal Netherlands Nicaragua Niger Nigeria Norway Oman Pakistan Palau Palestine Panama
Paraguay Peru Philippines Poland Portugal Qatar Romania Russia Rwanda Samoa Senegal Serbia
Seychelles Singapore Slovakia Slovenia Somalia Spain Sudan Suriname Sweden Switzerland Syria
Taiwan Tajikistan Tanzania Thailand Togo Tonga Trinidad Tunisia Turkey Turkmenistan Tuvalu Uganda
Ukraine Uruguay Uzbekistan Vanuatu Vatican Venezuela Vietnam Yemen Zambia Zimbabwe England
Scotland Wales Britain Prussia Ottoman Byzantium Rome Athens Sparta Babylon Mesopotamia Persia
London Paris Berlin Madrid Rome Vienna Prague Warsaw Budapest Moscow Istanbul Cairo Tokyo Beijing
Shanghai Delhi Mumbai Bangkok Seoul Sydney Melbourne Toronto Montreal Vancouver Chicago Boston
Seattle Denver Houston Phoenix Atlanta Miami Detroit Philadelphia Washington California Texas
Florida Ohio Oregon Nevada Arizona Alaska Hawaii Utah Iowa Kansas Kentucky Louisiana Maine
Maryland Massachusetts Michigan Minnesota Mississippi Missouri Montana Nebraska Oklahoma
Pennsylvania Tennessee Vermont Wisconsin Wyoming Alabama Arkansas Connecticut Delaware Idaho
Illinois Indiana Manhattan Brooklyn Hollywood Silicon Valley European American British French
German Spanish Italian Russian Chinese Japanese Korean Indian Mexican Canadian Australian African
Asian Arab Arabic Latin Greek Roman Persian Turkish Dutch Swedish Norwegian Danish Finnish Polish
Irish Scottish Welsh English Portuguese Brazilian Egyptian Israeli Iranian Iraqi Soviet Nazi
Jupiter Saturn Mars Venus Mercury Neptune Uranus Pluto Earth Moon Sun Milky Galaxy Hubble
"""

COMMON_WORDS: frozenset[str] = frozenset((_ENGLISH + _PROGRAMMING + _PLACES).split())
